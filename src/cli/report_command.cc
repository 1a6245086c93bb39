#include "cli/report_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>

#include <optional>
#include <string_view>
#include <vector>

#include "baseline/diff.h"
#include "cli/record_source.h"
#include "common/error.h"
#include "common/output_file.h"
#include "report/html_report.h"

namespace plumb::cli {
namespace {

constexpr std::string_view kCommOnly =
    "plumb report draws comm baselines; compare step records with plumb diff";

}  // namespace

void setup_report(CLI::App& app, ReportOptions& o) {
  app.add_option("A", o.a,
                 "A baseline id, latest, or a JSON file (plumb export, plumb comm --json)")
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
  const baseline::Record a = load_comm_record(o.a, o.db, kCommOnly);
  std::optional<baseline::Record> b;
  std::optional<baseline::Diff> d;
  if (!o.b.empty()) {
    b = load_comm_record(o.b, o.db, kCommOnly);
    d = baseline::diff(a, *b, {o.threshold_percent / 100.0});
  }
  const baseline::Record* pb = b ? &*b : nullptr;
  const baseline::Diff* pd = d ? &*d : nullptr;
  report::write_html_report(a, pb, pd, file.stream());
  file.commit();
  if (!file.is_stdout()) fmt::print(std::cout, "report: {}\n", o.output);
  return 0;
}

}  // namespace plumb::cli
