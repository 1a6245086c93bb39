#include "cli/report_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>

#include <optional>
#include <string_view>
#include <vector>

#include "baseline/diff.h"
#include "baseline/record_kind.h"
#include "cli/record_source.h"
#include "cli/store_option.h"
#include "common/error.h"
#include "common/output_file.h"
#include "report/html_report.h"
#include "report/serve_html.h"
#include "report/serve_reporter.h"
#include "report/set_html.h"

namespace plumb::cli {
namespace {

constexpr std::string_view kCommOnly =
    "plumb report draws comm baselines, baseline sets and serving records; compare step records "
    "with plumb diff";

struct Loaded {
  baseline::Record a;
  std::optional<baseline::Record> b;
  bool sets = false;  // A or B is a baseline set: the page of the set (report/set_html.h)
  bool serve = false;  // A is a serving record: the serving page (report/serve_html.h)
};

bool is_serve(const baseline::Record& r) {
  return baseline::kind_of(r) == baseline::RecordKind::kServe;
}

// A serving record is drawn with another serving record only.
void check_serve_pair(const Loaded& l, const ReportOptions& o) {
  if (!l.b || is_serve(l.a) == is_serve(*l.b)) return;
  const bool a_serves = is_serve(l.a);
  const std::string held = baseline::kind_info(baseline::kind_of(a_serves ? *l.b : l.a)).held;
  throw Error(fmt::format("plumb report draws a serving record beside another serving record: "
                          "{} is a serving record, {} is {}",
                          a_serves ? o.a : o.b, a_serves ? o.b : o.a,
                          held.empty() ? "a comm baseline" : held));
}

// A baseline set (A or B) makes the page of the set, whatever the other holds. Without one, both
// must hold comm measurements: a step or recovery record is refused by load_comm_record's
// message (read again only then).
Loaded load_records(const ReportOptions& o) {
  Loaded l{load_record(o.a, o.db), std::nullopt, false, false};
  if (!o.b.empty()) l.b = load_record(o.b, o.db);
  l.sets = baseline::holds_set(l.a) || (l.b && baseline::holds_set(*l.b));
  if (l.sets) return l;
  check_serve_pair(l, o);
  l.serve = is_serve(l.a);
  if (l.serve) return l;
  if (baseline::kind_of(l.a) != baseline::RecordKind::kComm) load_comm_record(o.a, o.db, kCommOnly);
  if (l.b && baseline::kind_of(*l.b) != baseline::RecordKind::kComm) {
    load_comm_record(o.b, o.db, kCommOnly);
  }
  return l;
}

std::string name_of(const std::string& given, const baseline::Record& r) {
  return r.id > 0 ? fmt::format("baseline {}", r.id) : given;
}

int write_serve_report(const Loaded& l, const ReportOptions& o, OutputFile& file) {
  const serve::ServeResult a = report::serve_from_json(l.a.serve, name_of(o.a, l.a));
  std::optional<serve::ServeResult> b;
  if (l.b) b = report::serve_from_json(l.b->serve, name_of(o.b, *l.b));
  report::write_serve_html({name_of(o.a, l.a), &a},
                           {l.b ? name_of(o.b, *l.b) : "", b ? &*b : nullptr}, file.stream());
  file.commit();
  if (!file.is_stdout()) fmt::print(std::cout, "report: {}\n", o.output);
  return 0;
}

}  // namespace

void setup_report(CLI::App& app, ReportOptions& o) {
  app.add_option("A", o.a,
                 "A baseline id, latest, or a JSON file (plumb export, plumb comm --json); a baseline "
                 "set gives a section per part, a serving record (plumb serve --store) its runs, "
                 "charts against the load and Pareto chart")
      ->required();
  app.add_option("B", o.b, "A second one, overlaid on A and judged against it");
  app.add_option("-o,--output", o.output, "The HTML file (- for standard output)")
      ->capture_default_str();
  app.add_option("--db", o.db, kStoreOptionHelp);
  app.add_option("-t,--threshold", o.threshold_percent,
                 "Percent: a smaller busbw change is never a regression")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
}

int run_report(const ReportOptions& o) {
  const std::vector<NamedPath> outputs = {{"-o", o.output}};
  refuse_overlapping_paths(outputs, record_inputs({o.a, o.b}, o.db));
  OutputFile file("-o", o.output);  // before any work: a bad path fails in a second
  const Loaded loaded = load_records(o);
  if (loaded.serve) return write_serve_report(loaded, o, file);
  const baseline::Record& a = loaded.a;
  const baseline::Record* pb = loaded.b ? &*loaded.b : nullptr;
  std::optional<baseline::Diff> d;
  // Two sets are compared part by part: comm's diff only where both hold comm rows.
  if (pb != nullptr && (!loaded.sets || (!a.rows.empty() && !pb->rows.empty()))) {
    d = baseline::diff(a, *pb, {o.threshold_percent / 100.0});
  }
  const baseline::Diff* pd = d ? &*d : nullptr;
  if (loaded.sets) {
    report::write_set_html(a, pb, pd, file.stream());
  } else {
    report::write_html_report(a, pb, pd, file.stream());
  }
  file.commit();
  if (!file.is_stdout()) fmt::print(std::cout, "report: {}\n", o.output);
  return 0;
}

}  // namespace plumb::cli
