// plumb serve bench: one run, or a sweep over --concurrency C1,C2,... or --rate A:B:STEP (each
// load point its own run, in order, --repeat times), reported on the console and as plumb.serve/1
// (docs/serve.md). Exit 0; 1 when a request failed or the client fell behind (the last line
// says which); 2 for bad usage or input.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include "cli/serve_options.h"
#include "cli/serve_run.h"
#include "cli/serve_store.h"
#include "cli/serve_subcommands.h"
#include "cli/stop_signal.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/output_file.h"
#include "common/progress.h"
#include "common/strings.h"
#include "common/url_redact.h"
#include "report/serve_reporter.h"
#include "serve/datasets.h"
#include "serve/measure.h"
#include "serve/workload.h"

namespace plumb::cli {
namespace {

using BenchOptions = ServeBenchOptions;

// The last line and the exit status: 1 when any request failed or the client fell behind.
int verdict(const serve::ServeResult& result, std::ostream& out) {
  std::int64_t failed = 0, total = 0;
  std::map<std::string, std::int64_t> kinds;
  std::string behind;
  for (const auto& run : result.runs) {
    failed += run.summary.errors;
    total += run.summary.errors + run.summary.completed;
    for (const auto& [k, n] : run.summary.errors_by_kind) kinds[k] += n;
    if (!run.summary.client_kept_up && behind.empty()) {
      behind = fmt::format("{}: lag p99 {:.3g} ms > {:g} ms", report::serve_run_label(run),
                           run.summary.client_lag_ms.p99, serve::kKeepUpLagP99Ms);
    }
  }
  std::vector<std::string> problems;
  if (failed > 0) {
    std::vector<std::string> parts;
    for (const auto& [k, n] : kinds) parts.push_back(fmt::format("{} {}", k, n));
    problems.push_back(
        fmt::format("{} of {} requests failed ({})", failed, total, join(parts, ", ")));
  }
  if (!behind.empty()) {
    problems.push_back(
        fmt::format("the client fell behind ({}); its delay is in these latencies", behind));
  }
  if (problems.empty()) {
    out << fmt::format(
        "plumb serve bench: {} requests in {} run{}, none failed; the client kept up\n", total,
        result.runs.size(), result.runs.size() == 1 ? "" : "s");
    return 0;
  }
  out << "plumb serve bench: " << join(problems, "; ") << "\n";
  return static_cast<int>(ExitCode::kCheckFailed);
}

int run_bench(const BenchOptions& o) {
  const std::vector<LoadPoint> points = load_points(o.load);
  serve::ServeResult result;
  result.setup = make_serve_setup(o, points);
  serve::make_workload(to_workload_spec(o.load, points.front()));  // bad input before any request
  std::unique_ptr<OutputFile> json;
  if (!o.report.json.empty()) json = std::make_unique<OutputFile>("--json", o.report.json);
  const std::unique_ptr<baseline::Store> store = open_serve_store(o.report);
  ignore_closed_pipes();
  Progress progress(stderr, !o.report.quiet && Progress::is_terminal(stderr));
  for (const LoadPoint& point : points) {
    result.runs.push_back(run_serve_point(o, point, result.setup.slo, progress, "plumb serve bench"));
    if (stop_on_signals().load()) break;
  }
  std::ostream& out = json && json->is_stdout() ? std::cerr : std::cout;
  report::print_serve_console(out, result);
  write_all_outputs({[&] {
                       if (!json) return;
                       json->stream() << report::serve_json(result).dump(2) << "\n";
                       json->commit();
                     },
                     [&] {
                       if (!store) return;
                       store_serve_result(*store, report::serve_json(result), o.endpoint.url,
                                          o.report, "plumb serve bench", out);
                     }});
  const int code = verdict(result, out);
  end_on_closed_stdout();
  return code;
}

}  // namespace

void setup_serve_bench(CLI::App& serve, std::function<int()>& selected) {
  CLI::App* sub = serve.add_subcommand(
      "bench",
      "Load an inference server: latency from each request's scheduled time, throughput, "
      "goodput; one run or a sweep over --concurrency C1,C2,... or --rate A:B:STEP");
  auto options = std::make_shared<BenchOptions>();
  add_serve_endpoint_options(*sub, options->endpoint);
  add_serve_load_options(*sub, options->load);
  add_serve_report_options(*sub, options->report);
  sub->callback([options, &selected] { selected = [options] { return run_bench(*options); }; });
}

}  // namespace plumb::cli
