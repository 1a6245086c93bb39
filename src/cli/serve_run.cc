#include "cli/serve_run.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <iterator>
#include <map>

#include "cli/stop_signal.h"
#include "common/input_file.h"
#include "common/url_redact.h"
#include "report/serve_reporter.h"
#include "serve/datasets.h"
#include "serve/measure.h"
#include "serve/workload.h"

namespace plumb::cli {
namespace {

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

}  // namespace

serve::ServeSetup make_serve_setup(const ServeBenchOptions& o, const std::vector<LoadPoint>& points) {
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

namespace {

// One line on stderr per kind of error of a run, with the first request's detail.
void say_errors(const std::string& who, const std::string& label,
                const std::vector<serve::RequestRecord>& records) {
  std::map<serve::ErrorKind, std::pair<int, std::string>> kinds;
  for (const auto& r : records) {
    if (r.ok()) continue;
    auto& [count, first] = kinds[r.error];
    if (count++ == 0) first = r.error_detail;
  }
  for (const auto& [kind, entry] : kinds) {
    std::cerr << fmt::format("{}: {}: {} request{} failed ({}); the first: {}\n", who,
                             label, entry.first, entry.first == 1 ? "" : "s",
                             serve::error_kind_name(kind), entry.second);
  }
}

struct Pooled {
  std::vector<serve::RequestRecord> records;
  serve::Nanos duration_ns = 0;
  std::int64_t not_released = 0;
};

}  // namespace

serve::ServeRun run_serve_point(const ServeBenchOptions& o, const LoadPoint& point,
                                const serve::Slo& slo, Progress& progress, const std::string& who) {
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
    say_errors(who, label, outcome.records);
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

}  // namespace plumb::cli
