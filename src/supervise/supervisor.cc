#include "supervise/supervisor.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>

#include "common/environment.h"

namespace plumb::supervise {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kSampleChars = 200;  // the sample line of a progress_unrecognised event

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

// Failure → recovery → restart, with the times each part took kept as a Recovery.
class Supervisor {
 public:
  Supervisor(const SuperviseOptions& o, const EventSink& sink)
      : o_(o), sink_(sink), window_(o.restart_window_s), backoff_(o.backoff_s),
        output_([this](int fd, int error) { output_closed(fd, error); }) {}

  RunSummary run() {
    AttemptOptions attempt = with_hooks(o_.attempt);
    for (int n = 1;; ++n) {
      summary_.attempts = n;
      attempt_ = n;
      nlohmann::json start = event("start");
      start["attempt"] = n;
      start["argv"] = attempt.argv;
      sink_(start);
      changed();
      summary_.last = run_attempt(attempt);
      if (ended(summary_.last)) break;
      if (!restart(n, attempt)) break;
    }
    changed();
    return summary_;
  }

 private:
  void changed() {
    summary_.seconds = std::chrono::duration<double>(Clock::now() - begin_).count();
    if (o_.on_change) o_.on_change(summary_);
  }

  AttemptOptions with_hooks(AttemptOptions a) {
    a.on_progress = [this](std::optional<int64_t> step) { on_progress(step); };
    a.on_unmatched = [this](std::string_view line) { return on_unmatched(line); };
    a.on_resumed = [this](int64_t step) { on_resumed(step); };
    a.on_start = [this](int group) {
      restarted_at_ = Clock::now();
      if (o_.drill != nullptr) o_.drill->on_start(group);
    };
    a.output = &output_;
    return a;
  }

  // plumb's stdout or stderr can no longer be written: said once, on the events file (and by the
  // console on stderr when that is still open); the job's output there is dropped from now on.
  void output_closed(int fd, int error) {
    nlohmann::json e = event("output_closed");
    e["stream"] = fd == STDOUT_FILENO ? "stdout" : "stderr";
    e["error"] = std::strerror(error);
    sink_(e);
  }

  // Lines that matched no progress pattern while none ever did: after the first
  // unmatched_lines_warning of them, one event with the first non-blank line from then on.
  // False once there is nothing more to say.
  bool on_unmatched(std::string_view line) {
    if (progress_seen_ || warned_unmatched_) return false;
    if (++unmatched_ < o_.unmatched_lines_warning) return true;
    if (line.find_first_not_of(" \t\r\f\v") == std::string_view::npos) return true;
    warned_unmatched_ = true;
    nlohmann::json e = event("progress_unrecognised");
    e["lines"] = unmatched_;
    e["sample"] = std::string(line.substr(0, kSampleChars));
    sink_(e);
    return false;
  }

  // The restarted job says which step it resumed from: steps lost are counted from it.
  void on_resumed(int64_t step) {
    nlohmann::json e = event("resumed");
    e["attempt"] = attempt_;
    e["step"] = step;
    sink_(e);
    if (summary_.recoveries.empty() || summary_.recoveries.back().attempt != attempt_ - 1) return;
    resumed_said_ = step;
    count_steps_lost(summary_.recoveries.back());
    changed();
  }

  // Runs on every progress line: one clock read.
  void on_progress(std::optional<int64_t> step) {
    progress_seen_ = true;
    const Clock::time_point now = Clock::now();
    if (!summary_.recoveries.empty()) first_progress_after(summary_.recoveries.back(), step, now);
    if (o_.drill != nullptr) o_.drill->on_progress(step);
    if (now - last_progress_event_ < std::chrono::duration<double>(o_.progress_every_s)) return;
    last_progress_event_ = now;
    nlohmann::json e = event("progress");
    e["step"] = step ? nlohmann::json(*step) : nlohmann::json();
    sink_(e);
  }

  // The restarted job's first progress closes the recovery of the failure before it.
  void first_progress_after(Recovery& r, std::optional<int64_t> step, Clock::time_point now) {
    if (r.attempt != attempt_ - 1 || r.restart_to_first_step_seconds) return;
    r.restart_to_first_step_seconds = std::chrono::duration<double>(now - restarted_at_).count();
    r.downtime_seconds = std::chrono::duration<double>(now - failed_at_).count();
    r.first_step_after = step;
    if (step && r.checkpoint_step) r.resumed_after_checkpoint = *step == *r.checkpoint_step + 1;
    count_steps_lost(r);
    changed();
  }

  // The step the restarted job resumed after (its next step is one more): the one it said in a
  // resume line; else the checkpoint's, unless its first step came at or before it (it did not
  // resume from there); else the step before its first one; unknown before either is known.
  std::optional<int64_t> resumed_after(const Recovery& r) const {
    if (resumed_said_) return resumed_said_;
    if (r.checkpoint_step && (!r.first_step_after || *r.first_step_after > *r.checkpoint_step)) {
      return r.checkpoint_step;
    }
    if (r.first_step_after) return *r.first_step_after - 1;
    return std::nullopt;
  }

  // Steps done again: the failed attempt's last step less the step resumed after (all of them
  // when that is unknown), never below 0.
  void count_steps_lost(Recovery& r) const {
    if (!r.last_step) return;
    r.steps_lost = std::max<int64_t>(0, *r.last_step - resumed_after(r).value_or(0));
  }

  // Finished or stopped: the run is over. A failure: recorded, and false is returned.
  bool ended(const AttemptResult& r) {
    if (r.outcome == Outcome::kFinished) {
      nlohmann::json e = event("finished");
      e["attempt"] = attempt_;
      e["seconds"] = r.seconds;
      sink_(e);
      return true;
    }
    if (r.outcome == Outcome::kStopped) return stop();
    record_failure(r);
    return false;
  }

  bool stop() {
    summary_.stopped = true;
    sink_(event("stopped"));
    return true;
  }

  void record_failure(const AttemptResult& r) {
    const Clock::time_point noticed = Clock::now();
    ++summary_.failures;
    summary_.failed.push_back(r);
    Recovery rec;
    rec.attempt = attempt_;
    rec.kind = outcome_name(r.outcome);
    rec.detail = r.detail;
    rec.last_step = r.last_step;
    // A hang cost the whole quiet time, not only the overshoot past the deadline.
    rec.detect_seconds = r.outcome == Outcome::kHang ? r.detect_seconds + o_.attempt.hang_timeout_s
                                                     : r.detect_seconds;
    std::string injected;
    if (std::optional<Injection> fault = o_.drill != nullptr ? o_.drill->take_injection()
                                                             : std::nullopt) {
      rec.detect_seconds = std::chrono::duration<double>(noticed - fault->at).count();
      injected = fault_name(fault->kind);
      rec.detail += fmt::format(" (drill: injected {})", injected);
    }
    failed_at_ = noticed - std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(rec.detect_seconds));
    nlohmann::json e = failure_event(r, attempt_);
    e["detect_seconds"] = rec.detect_seconds;
    if (!injected.empty()) e["injected"] = injected;
    sink_(e);
    summary_.recoveries.push_back(std::move(rec));
  }

  // Recovery steps, the back-off and the next attempt's preparation; false when the run ends
  // here (too many failures, or stopped meanwhile).
  bool restart(int n, AttemptOptions& attempt) {
    Recovery& rec = summary_.recoveries.back();
    resumed_said_.reset();
    if (window_.count_after_failure() > max_restarts()) return give_up();
    if (o_.recover) rec.steps = o_.recover(n);
    if (o_.attempt.stop != nullptr && o_.attempt.stop->load()) return !stop();
    nlohmann::json wait = event("backoff");
    wait["attempt"] = n + 1;
    wait["seconds"] = backoff_;
    sink_(wait);
    const Clock::time_point before = Clock::now();
    if (!back_off(backoff_, o_.attempt.stop)) return !stop();
    rec.backoff_seconds = std::chrono::duration<double>(Clock::now() - before).count();
    backoff_ *= 2;
    attempt = with_hooks(o_.attempt);
    nlohmann::json e = event("restart");
    e["attempt"] = n + 1;
    attempt.env.push_back({"PLUMB_RESTART", std::to_string(n)});
    if (o_.prepare) rec.checkpoint_step = o_.prepare(n + 1, attempt, e);
    count_steps_lost(rec);
    sink_(e);
    changed();
    return true;
  }

  // A drill's faults do not use up the restarts a real failure may have.
  int max_restarts() const {
    return o_.max_restarts + (o_.drill != nullptr ? o_.drill->injected() : 0);
  }

  bool give_up() {
    summary_.gave_up = true;
    nlohmann::json e = event("give_up");
    e["failures_in_window"] = max_restarts() + 1;
    e["last_failure"] = summary_.last.detail;
    sink_(e);
    return false;
  }

  const SuperviseOptions& o_;
  const EventSink& sink_;
  RestartWindow window_;
  double backoff_;
  RunSummary summary_;
  const Clock::time_point begin_ = Clock::now();
  int attempt_ = 0;
  Clock::time_point last_progress_event_{};
  Clock::time_point restarted_at_{};
  Clock::time_point failed_at_{};
  PassThrough output_;                     // plumb's stdout and stderr, for every attempt
  bool progress_seen_ = false;             // a progress line (or heartbeat) in the run so far
  int64_t unmatched_ = 0;                  // lines that matched no progress pattern before that
  bool warned_unmatched_ = false;
  std::optional<int64_t> resumed_said_;    // the running attempt's resume line, if any
};

}  // namespace

RunSummary supervise(const SuperviseOptions& o, const EventSink& sink) {
  return Supervisor(o, sink).run();
}

int exit_code_of(const RunSummary& s) {
  if (s.stopped) return 130;
  if (s.gave_up) return 1;
  return 0;
}

}  // namespace plumb::supervise
