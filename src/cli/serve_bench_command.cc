// plumb serve bench: one run, or a sweep over --concurrency C1,C2,... or --rate A:B:STEP (each
// load point its own run, in order, --repeat times), reported on the console and as plumb.serve/1
// (docs/serve-load.md). Exit 0; 1 when a request failed or the client fell behind (the last line
// says which); 2 for bad usage or input.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include "cli/serve_options.h"
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

struct BenchOptions {
  ServeEndpointOptions endpoint;
  ServeLoadOptions load;
  ServeReportOptions report;
};

// The dataset's format as the workload reads it ("" for random prompts).
std::string dataset_format(const ServeLoadOptions& o) {
  if (o.dataset.empty()) return "";
  if (!o.dataset_format.empty()) return o.dataset_format;
  const std::string text = read_whole_file(o.dataset, "a dataset");
  const serve::DatasetFormat f = serve::guess_dataset_format(text);
  return f == serve::DatasetFormat::trace      ? "trace"
         : f == serve::DatasetFormat::sharegpt ? "sharegpt"
                                               : "jsonl";
}

std::string arrival_text(const ServeLoadOptions& o, const LoadPoint& point,
                         const std::string& format) {
  if (format == "trace") return "trace";
  if (point.rate == 0) return "closed";
  return o.arrival == "gamma" ? fmt::format("gamma({:g})", o.burstiness) : o.arrival;
}

serve::ServeSetup make_setup(const BenchOptions& o, const std::vector<LoadPoint>& points) {
  serve::ServeSetup s;
  s.url = redact_url(o.endpoint.url);
  s.api = o.endpoint.api;
  s.model = o.endpoint.model;
  const std::string format = dataset_format(o.load);
  s.arrival = arrival_text(o.load, points.front(), format);
  s.dataset = format.empty()
                  ? fmt::format("random {}/{}", o.load.input_tokens, o.load.output_tokens)
                  : fmt::format("{} {}", format, o.load.dataset);
  s.seed = o.load.seed;
  s.cards = o.report.cards;
  s.slo = serve::parse_slo(o.report.slo);
  return s;
}

// One line on stderr per kind of error of a run, with the first request's detail.
void say_errors(const std::string& label, const std::vector<serve::RequestRecord>& records) {
  std::map<serve::ErrorKind, std::pair<int, std::string>> kinds;
  for (const auto& r : records) {
    if (r.ok()) continue;
    auto& [count, first] = kinds[r.error];
    if (count++ == 0) first = r.error_detail;
  }
  for (const auto& [kind, entry] : kinds) {
    std::cerr << fmt::format("plumb serve bench: {}: {} request{} failed ({}); the first: {}\n",
                             label, entry.first, entry.first == 1 ? "" : "s",
                             serve::error_kind_name(kind), entry.second);
  }
}

struct Pooled {
  std::vector<serve::RequestRecord> records;
  serve::Nanos duration_ns = 0;
  std::int64_t not_released = 0;
};

serve::ServeRun run_point(const BenchOptions& o, const LoadPoint& point, const serve::Slo& slo,
                          Progress& progress) {
  serve::ServeRun run;
  run.concurrency = point.concurrency;
  run.rate = point.rate;
  const std::string label = report::serve_run_label(run);
  const serve::Workload workload = serve::make_workload(to_workload_spec(o.load, point));
  const auto warmup_ns = static_cast<serve::Nanos>(std::llround(o.load.warmup_s * 1e9));
  Pooled pooled;
  for (int rep = 0; rep < o.load.repeat; ++rep) {
    serve::RunControl control = to_run_control(o.endpoint);
    control.stop = &stop_on_signals();
    size_t done = 0, failed = 0;
    const size_t total = workload.requests.size();
    control.on_done = [&](const serve::RequestRecord& r) {
      ++done;
      failed += r.ok() ? 0 : 1;
      progress.update(
          done, total,
          fmt::format("{} run {}/{}: {} errors", label, rep + 1, o.load.repeat, failed));
      return true;
    };
    serve::RunOutcome outcome = serve::run_load(to_endpoint(o.endpoint), workload, control);
    progress.clear();
    say_errors(label, outcome.records);
    serve::Measured m =
        serve::exclude_warmup(std::move(outcome.records), outcome.duration_ns, warmup_ns);
    if (o.load.repeat > 1)
      run.repeats.push_back(serve::summarize(m.records, m.duration_ns, outcome.not_released, slo));
    pooled.duration_ns += m.duration_ns;
    pooled.not_released += outcome.not_released;
    std::move(m.records.begin(), m.records.end(), std::back_inserter(pooled.records));
    if (stop_on_signals().load()) break;
  }
  run.summary = serve::summarize(pooled.records, pooled.duration_ns, pooled.not_released, slo);
  return run;
}

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
  result.setup = make_setup(o, points);
  serve::make_workload(to_workload_spec(o.load, points.front()));  // bad input before any request
  std::unique_ptr<OutputFile> json;
  if (!o.report.json.empty()) json = std::make_unique<OutputFile>("--json", o.report.json);
  Progress progress(stderr, !o.report.quiet && Progress::is_terminal(stderr));
  for (const LoadPoint& point : points) {
    result.runs.push_back(run_point(o, point, result.setup.slo, progress));
    if (stop_on_signals().load()) break;
  }
  std::ostream& out = json && json->is_stdout() ? std::cerr : std::cout;
  report::print_serve_console(out, result);
  if (json) {
    json->stream() << report::serve_json(result).dump(2) << "\n";
    json->commit();
  }
  return verdict(result, out);
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
