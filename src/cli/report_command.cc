#include "cli/report_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>

#include <optional>
#include <string_view>
#include <vector>

#include "baseline/diff.h"
#include "baseline/record_kind.h"
#include "cli/record_source.h"
#include "common/error.h"
#include "common/output_file.h"
#include "report/html_report.h"
#include "report/set_html.h"

namespace plumb::cli {
namespace {

constexpr std::string_view kCommOnly =
    "plumb report draws comm baselines and baseline sets; compare step records with plumb diff";

struct Loaded {
  baseline::Record a;
  std::optional<baseline::Record> b;
  bool sets = false;  // A or B is a baseline set: the page of the set (report/set_html.h)
};

// A baseline set (A or B) makes the page of the set, whatever the other holds. Without one, both
// must hold comm measurements: a step or recovery record is refused by load_comm_record's
// message (read again only then).
Loaded load_records(const ReportOptions& o) {
  Loaded l{load_record(o.a, o.db), std::nullopt, false};
  if (!o.b.empty()) l.b = load_record(o.b, o.db);
  l.sets = baseline::holds_set(l.a) || (l.b && baseline::holds_set(*l.b));
  if (l.sets) return l;
  if (baseline::kind_of(l.a) != baseline::RecordKind::kComm) load_comm_record(o.a, o.db, kCommOnly);
  if (l.b && baseline::kind_of(*l.b) != baseline::RecordKind::kComm) {
    load_comm_record(o.b, o.db, kCommOnly);
  }
  return l;
}

}  // namespace

void setup_report(CLI::App& app, ReportOptions& o) {
  app.add_option("A", o.a,
                 "A baseline id, latest, or a JSON file (plumb export, plumb comm --json); a baseline "
                 "set gives a section per part")
      ->required();
  app.add_option("B", o.b, "A second one, overlaid on A and judged against it");
  app.add_option("-o,--output", o.output, "The HTML file (- for standard output)")
      ->capture_default_str();
  app.add_option("--db", o.db, "The store (default $XDG_DATA_HOME/plumb/plumb.db)");
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
