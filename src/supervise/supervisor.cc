#include "supervise/supervisor.h"

#include <fmt/format.h>

#include <chrono>
#include <deque>
#include <thread>

#include "common/environment.h"

namespace plumb::supervise {
namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json event(const char* name) {
  return {{"event", name}, {"time", utc_timestamp()}};
}

nlohmann::json failure_event(const AttemptResult& r, int attempt) {
  nlohmann::json e = event("failure");
  e["attempt"] = attempt;
  e["kind"] = outcome_name(r.outcome);
  e["detail"] = r.detail;
  e["step"] = r.last_step ? nlohmann::json(*r.last_step) : nlohmann::json();
  e["seconds"] = r.seconds;
  e["detect_seconds"] = r.detect_seconds;
  return e;
}

// Failures inside the window: the restart limit counts only those.
class RestartWindow {
 public:
  explicit RestartWindow(double seconds) : seconds_(seconds) {}
  int count_after_failure() {
    const Clock::time_point now = Clock::now();
    failures_.push_back(now);
    while (!failures_.empty() &&
           std::chrono::duration<double>(now - failures_.front()).count() > seconds_) {
      failures_.pop_front();
    }
    return static_cast<int>(failures_.size());
  }

 private:
  double seconds_;
  std::deque<Clock::time_point> failures_;
};

// Sleeps `seconds` unless plumb is asked to stop meanwhile; false when stopped.
bool back_off(double seconds, const std::atomic<bool>* stop) {
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    if (stop != nullptr && stop->load()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return stop == nullptr || !stop->load();
}

}  // namespace

RunSummary supervise(const SuperviseOptions& o, const EventSink& sink) {
  RunSummary summary;
  RestartWindow window(o.restart_window_s);
  AttemptOptions attempt = o.attempt;
  Clock::time_point last_progress_event{};
  auto progress_hook = [&](std::optional<int64_t> step) {
    if (Clock::now() - last_progress_event < std::chrono::duration<double>(o.progress_every_s)) {
      return;
    }
    last_progress_event = Clock::now();
    nlohmann::json e = event("progress");
    e["step"] = step ? nlohmann::json(*step) : nlohmann::json();
    sink(e);
  };
  attempt.on_progress = progress_hook;
  double backoff = o.backoff_s;
  for (int n = 1;; ++n) {
    summary.attempts = n;
    nlohmann::json start = event("start");
    start["attempt"] = n;
    start["argv"] = attempt.argv;
    sink(start);
    summary.last = run_attempt(attempt);
    const AttemptResult& r = summary.last;
    if (r.outcome == Outcome::kFinished) {
      nlohmann::json e = event("finished");
      e["attempt"] = n;
      e["seconds"] = r.seconds;
      sink(e);
      return summary;
    }
    if (r.outcome == Outcome::kStopped) {
      summary.stopped = true;
      sink(event("stopped"));
      return summary;
    }
    ++summary.failures;
    summary.failed.push_back(r);
    sink(failure_event(r, n));
    if (window.count_after_failure() > o.max_restarts) {
      summary.gave_up = true;
      nlohmann::json e = event("give_up");
      e["failures_in_window"] = o.max_restarts + 1;
      e["last_failure"] = r.detail;
      sink(e);
      return summary;
    }
    if (!back_off(backoff, o.attempt.stop)) {
      summary.stopped = true;
      sink(event("stopped"));
      return summary;
    }
    backoff *= 2;
    attempt = o.attempt;
    attempt.on_progress = progress_hook;
    nlohmann::json restart = event("restart");
    restart["attempt"] = n + 1;
    attempt.env.push_back({"PLUMB_RESTART", std::to_string(n)});
    if (o.prepare) o.prepare(n + 1, attempt, restart);
    sink(restart);
  }
}

int exit_code_of(const RunSummary& s) {
  if (s.stopped) return 130;
  if (s.gave_up) return 1;
  return 0;
}

}  // namespace plumb::supervise
