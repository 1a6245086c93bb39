#include "cli/serve_run.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <time.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <exception>

#include "cli/stop_signal.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/url_redact.h"
#include "report/serve_reporter.h"
#include "serve/cost.h"
#include "serve/datasets.h"
#include "serve/energy.h"
#include "serve/measure.h"
#include "serve/server_metrics.h"
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

// The server's /metrics (--metrics-url) and the cards' power (--power) around a load point's
// runs: scraped and sampled from before its first repetition to after its last, the times from
// the first repetition's start (docs/serve.md, "Server side" and "Cost and energy").
constexpr double kScrapeIntervalS = 1.0;
constexpr double kPowerIntervalS = 0.5;
constexpr double kPowerToolTimeoutS = 5.0;

class Sidecars {
 public:
  explicit Sidecars(const ServeReportOptions& o) {
    if (!o.metrics_url.empty()) {
      scraper_ = std::make_unique<serve::ServerScraper>(o.metrics_url, kScrapeIntervalS);
      scraper_->before();
    }
    if (!o.power.empty()) {
      power_ = std::make_unique<serve::PowerSampler>(
          o.power, serve::make_power_reader(o.power, kPowerToolTimeoutS), kPowerIntervalS);
    }
  }
  void start(serve::Nanos now) {
    if (scraper_) scraper_->start(now);
    if (power_) power_->start(now);
  }
  // `origin_ns`: the first repetition's start; `end_ns`: the last one's end (both absolute).
  void finish(serve::ServeRun& run, serve::Nanos origin_ns, serve::Nanos end_ns,
              std::int64_t output_tokens) {
    if (scraper_) run.server = scraper_->finish(origin_ns);
    if (power_) run.energy = power_->finish(static_cast<double>(end_ns - origin_ns) * 1e-9,
                                            output_tokens, origin_ns);
  }

 private:
  std::unique_ptr<serve::ServerScraper> scraper_;
  std::unique_ptr<serve::PowerSampler> power_;
};

serve::Nanos monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<serve::Nanos>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::int64_t output_tokens_of(const std::vector<serve::RequestRecord>& records) {
  std::int64_t n = 0;
  for (const serve::RequestRecord& r : records) n += r.output_tokens;
  return n;
}

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
  Sidecars sidecars(o.report);
  sidecars.start(monotonic_now());
  serve::Nanos first_start = serve::kNoTime, last_end = 0;
  std::int64_t sampled_tokens = 0;  // warm-up included: the power covers it too
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
    if (first_start == serve::kNoTime) first_start = outcome.start_ns;
    last_end = outcome.start_ns + outcome.duration_ns;
    sampled_tokens += output_tokens_of(outcome.records);
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
  sidecars.finish(run, first_start, last_end, sampled_tokens);
  const std::optional<serve::Price> price = serve::price_from(o.report.price, o.report.hardware);
  if (price) run.cost = serve::cost_of(*price, o.report.cards, run.summary);
  return run;
}

void ignore_closed_pipes() {
  struct sigaction sa {};
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGPIPE, &sa, nullptr);
}

namespace {

// Standard output is a pipe whose reader is gone: poll(2) says POLLERR for the write end of a
// pipe with no reader left (Linux pipe_poll).
bool stdout_reader_gone() {
  struct stat st {};
  if (::fstat(STDOUT_FILENO, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  pollfd p{STDOUT_FILENO, POLLOUT, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0;
}

}  // namespace

void end_on_closed_stdout() {
  std::cout.flush();
  std::fflush(stdout);
  if (!stdout_reader_gone()) return;
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0) return;
  ::dup2(null, STDOUT_FILENO);
  ::close(null);
  std::clearerr(stdout);
  std::cout.clear();
}

void write_all_outputs(const std::vector<std::function<void()>>& outputs) {
  std::exception_ptr first;
  for (const auto& output : outputs) {
    try {
      output();
    } catch (const Error& e) {
      if (!first) {
        first = std::current_exception();
      } else {
        fmt::print(stderr, "plumb: error: {}\n", e.what());
      }
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace plumb::cli
