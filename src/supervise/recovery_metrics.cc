#include "supervise/recovery_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "common/output_file.h"
#include "common/stats.h"
#include "supervise/recovery_json.h"

namespace plumb::supervise {
namespace {

// What plumb_run_result can say; the baseline's result is "" while the job still runs.
constexpr const char* kResults[] = {"running", "finished", "gave_up", "stopped"};

// A label value in the exposition format: backslash, double quote and newline escaped.
std::string label_value(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// Go's ParseFloat reads fmt's shortest round-trip form; NaN is spelt as Prometheus spells it.
std::string value(double v) { return std::isnan(v) ? std::string("NaN") : fmt::format("{}", v); }

class Writer {
 public:
  explicit Writer(std::string job) : job_(fmt::format("job_name=\"{}\"", label_value(job))) {}

  void family(std::string_view name, std::string_view type, std::string_view help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  // One sample; `labels` are extra ones, already written as name="value".
  void sample(std::string_view name, double v, std::string_view labels = "") {
    text_ += fmt::format("{}{{{}{}{}}} {}\n", name, job_, labels.empty() ? "" : ",", labels,
                         value(v));
  }
  // A summary over the recoveries: median (quantile 0.5), maximum (quantile 1), sum and count.
  void summary(std::string_view name, std::string_view help, const std::vector<double>& values) {
    family(name, "summary", help);
    double sum = 0;
    for (double v : values) sum += v;
    const auto [median, max] = median_and_max(values);
    sample(name, median, "quantile=\"0.5\"");
    sample(name, max, "quantile=\"1\"");
    sample(fmt::format("{}_sum", name), sum);
    sample(fmt::format("{}_count", name), static_cast<double>(values.size()));
  }
  std::string text() && { return std::move(text_); }

 private:
  // NaN for no value, as client libraries write an empty summary's quantiles.
  static std::pair<double, double> median_and_max(const std::vector<double>& values) {
    if (values.empty()) return {NAN, NAN};
    return {percentile(values, 50), *std::max_element(values.begin(), values.end())};
  }

  std::string job_;
  std::string text_;
};

std::string job_name(const RecoveryBaseline& b) {
  if (b.command.empty()) return "";
  return std::filesystem::path(b.command.front()).filename().string();
}

void counts(Writer& w, const RecoveryBaseline& b) {
  w.family("plumb_run_attempts", "gauge", "Attempts of the job started so far (1 + restarts).");
  w.sample("plumb_run_attempts", b.attempts);
  w.family("plumb_run_restarts_total", "counter", "Restarts of the job after a failure.");
  w.sample("plumb_run_restarts_total", recovery_totals(b).restarts);
  w.family("plumb_run_failures_total", "counter",
           "Failures of the job by kind: exit (non-zero exit), signal, hang (no progress for "
           "--hang-timeout), fatal_line (a --fatal-regex line).");
  std::map<std::string, int> by_kind = b.failures_by_kind;
  for (const char* kind : kFailureKinds) by_kind.try_emplace(kind, 0);
  for (const auto& [kind, n] : by_kind) {
    w.sample("plumb_run_failures_total", n, fmt::format("kind=\"{}\"", label_value(kind)));
  }
}

void durations(Writer& w, const RecoveryBaseline& b) {
  std::vector<double> detect;
  std::vector<double> recovery;
  std::vector<double> downtime;
  for (const Recovery& r : b.recoveries) {
    detect.push_back(r.detect_seconds);
    recovery.push_back(r.recovery_seconds());
    if (r.downtime_seconds) downtime.push_back(*r.downtime_seconds);
  }
  w.summary("plumb_run_detect_seconds",
            "Failure to plumb acting on it, over the run's failures (0.5: median, 1: maximum).",
            detect);
  w.summary("plumb_run_recovery_seconds",
            "The recovery steps' time after a failure, over the run's failures (0.5: median, 1: "
            "maximum).",
            recovery);
  w.summary("plumb_run_downtime_seconds",
            "Failure noticed to the restarted job's first progress, over the failures after "
            "which it progressed again (0.5: median, 1: maximum).",
            downtime);
}

void steps(Writer& w, const RecoveryBaseline& b) {
  std::map<std::string, double> last;
  std::map<std::string, int> failed;
  for (const Recovery& r : b.recoveries) {
    for (const RecoveryStepTiming& s : r.steps) {
      last[s.name] = s.seconds;
      failed[s.name] += s.ok ? 0 : 1;
    }
  }
  w.family("plumb_run_recovery_step_seconds", "gauge",
           "The last run of each recovery step (clear-cache, reset-device, link-check, "
           "on-failure): its seconds.");
  for (const auto& [name, seconds] : last) {
    w.sample("plumb_run_recovery_step_seconds", seconds,
             fmt::format("step=\"{}\"", label_value(name)));
  }
  w.family("plumb_run_recovery_step_failures_total", "counter",
           "Recovery steps that failed (a device that did not reset, a link that stayed down).");
  for (const auto& [name, n] : failed) {
    w.sample("plumb_run_recovery_step_failures_total", n,
             fmt::format("step=\"{}\"", label_value(name)));
  }
}

void outcome(Writer& w, const RecoveryBaseline& b) {
  w.family("plumb_run_steps_lost_total", "counter",
           "Training steps done again after restarts (last step reported minus the checkpoint's "
           "step).");
  w.sample("plumb_run_steps_lost_total", static_cast<double>(recovery_totals(b).steps_lost));
  w.family("plumb_run_result", "gauge",
           "1 for the run's state (running, finished, gave_up, stopped), 0 for the others.");
  const std::string now = b.result.empty() ? "running" : b.result;
  std::vector<std::string> states(std::begin(kResults), std::end(kResults));
  if (std::find(states.begin(), states.end(), now) == states.end()) states.push_back(now);
  for (const std::string& state : states) {
    w.sample("plumb_run_result", state == now ? 1 : 0,
             fmt::format("result=\"{}\"", label_value(state)));
  }
  w.family("plumb_run_wall_seconds", "gauge", "Time since plumb run started the job.");
  w.sample("plumb_run_wall_seconds", b.wall_seconds);
}

}  // namespace

std::string prometheus_textfile(const RecoveryBaseline& b) {
  Writer w(job_name(b));
  counts(w, b);
  durations(w, b);
  steps(w, b);
  outcome(w, b);
  return std::move(w).text();
}

void write_metrics_file(const std::string& path, const RecoveryBaseline& b) {
  write_output("--metrics", path, prometheus_textfile(b));
}

}  // namespace plumb::supervise
