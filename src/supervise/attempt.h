// One attempt of a supervised job: start the command in a process group of its own, pass its
// output through unchanged, watch it for progress, fatal lines, a hang or its end, and stop its
// whole process tree when it fails (docs/run.md). No restarts here: supervisor.h loops.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "supervise/patterns.h"

namespace plumb::supervise {

// plumb's own standard output and error, where the job's output is passed on. A stream that can
// no longer be written (its reader closed the pipe: `plumb run ... | head -1`; SIGPIPE is
// ignored) is reported once through `on_closed` and skipped from then on: supervision goes on.
// One per run, shared by its attempts.
class PassThrough {
 public:
  using OnClosed = std::function<void(int fd, int error)>;
  explicit PassThrough(OnClosed on_closed = {}) : on_closed_(std::move(on_closed)) {}

  // All of `bytes` to `fd` (STDOUT_FILENO or STDERR_FILENO), unless the stream fails or *stop
  // becomes true while the write waits for a reader that does not read (the rest is dropped).
  void write(int fd, std::string_view bytes, const std::atomic<bool>* stop);
  bool closed(int fd) const { return fd >= 0 && fd < 3 && closed_[fd]; }

 private:
  bool closed_[3] = {};
  OnClosed on_closed_;
};

// Until an attempt's first progress line, any output counts as activity: a job whose lines match
// none of the progress patterns is not a hang while it prints (docs/run.md, "Progress"). This
// many output lines without a match make the one warning that says so.
inline constexpr int64_t kUnmatchedLinesWarning = 1000;

struct AttemptOptions {
  std::vector<std::string> argv;                            // argv[0] looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;     // set in the job's environment
  double hang_timeout_s = 0;    // no progress for this long is a hang; 0: never
  std::string heartbeat;        // a file whose modification counts as progress; empty: none
  double kill_grace_s = 10;     // SIGTERM, then SIGKILL after this long
  std::vector<LinePattern> progress;
  std::vector<LinePattern> fatal;
  std::vector<LinePattern> resume;  // tried until the attempt's first progress line
  std::function<void(std::optional<int64_t> step)> on_progress;  // each progress line or touch
  // Each output line that matched no progress pattern, while the attempt has had no progress
  // line (never with --heartbeat, whose touches are the progress then): the line, cut at
  // kMaxLineBytes. Returns false when it wants no more of them in this attempt.
  std::function<bool(std::string_view line)> on_unmatched;
  // A resume line (`resume`) before the first progress line: the step the job says it resumed
  // from.
  std::function<void(int64_t step)> on_resumed;
  std::function<void(int process_group)> on_start;  // the job's process group, once started
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT/SIGTERM to plumb: stop, not a failure
  PassThrough* output = nullptr;  // where the job's output goes; none: a PassThrough of its own
};

enum class Outcome { kFinished, kExit, kSignal, kHang, kFatalLine, kStopped };

struct AttemptResult {
  Outcome outcome = Outcome::kFinished;
  int exit_code = 0;
  int signal = 0;
  std::string detail;                 // the fatal line, "exit 3", "SIGKILL", "no progress for 30 s"
  std::optional<int64_t> last_step;   // the last step a progress line named
  double seconds = 0;                 // the attempt, start to end
  double detect_seconds = 0;          // from the failure (exit, last progress + timeout, line) to
                                      // plumb acting on it
};

// Runs one attempt. A command that cannot be started (not found, not executable) throws
// plumb::Error naming it, exit 2.
AttemptResult run_attempt(const AttemptOptions& options);

// "exit 3", "SIGKILL", ... for messages.
std::string outcome_name(Outcome outcome);

}  // namespace plumb::supervise
