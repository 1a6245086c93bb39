// One attempt of a supervised job: start the command in a process group of its own, pass its
// output through unchanged, watch it for progress, fatal lines, a hang or its end, and stop its
// whole process tree when it fails (docs/run.md). No restarts here: supervisor.h loops.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "supervise/patterns.h"

namespace plumb::supervise {

struct AttemptOptions {
  std::vector<std::string> argv;                            // argv[0] looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;     // set in the job's environment
  double hang_timeout_s = 0;    // no progress for this long is a hang; 0: never
  std::string heartbeat;        // a file whose modification counts as progress; empty: none
  double kill_grace_s = 10;     // SIGTERM, then SIGKILL after this long
  std::vector<LinePattern> progress;
  std::vector<LinePattern> fatal;
  std::function<void(std::optional<int64_t> step)> on_progress;  // each progress line or touch
  std::function<void(int process_group)> on_start;  // the job's process group, once started
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT/SIGTERM to plumb: stop, not a failure
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
