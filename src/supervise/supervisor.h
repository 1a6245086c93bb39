// `plumb run`: attempts of a job in a loop — a failure (crash, hang, fatal line) is followed by
// the back-off and a restart, up to --max-restarts within --restart-window — with every event
// written as plumb.run-events/1 JSONL (docs/run.md).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "supervise/attempt.h"
#include "supervise/drill.h"
#include "supervise/recovery_record.h"

namespace plumb::supervise {

inline constexpr const char* kRunEventsSchema = "plumb.run-events/1";

struct SuperviseOptions {
  AttemptOptions attempt;
  int max_restarts = 3;
  double restart_window_s = 3600;
  double backoff_s = 5;             // doubled after each restart within the window
  double progress_every_s = 10;     // progress events are throttled to one per this long
  // After a failure, before the back-off: the recovery steps (recovery.h), each timed.
  std::function<std::vector<RecoveryStepTiming>(int failed_attempt)> recover;
  // Before each restart: what to add to the environment and the command line (checkpoint,
  // attempt); returns the step of the checkpoint resumed from, if any. May throw.
  std::function<std::optional<int64_t>(int attempt, AttemptOptions& next,
                                       nlohmann::json& restart_event)>
      prepare;
  Drill* drill = nullptr;           // --drill: injects the faults
  // While no progress line has been seen in the run: after this many output lines that matched
  // no progress pattern, one progress_unrecognised event with a sample line.
  int64_t unmatched_lines_warning = kUnmatchedLinesWarning;
  // After every start, failure, restart and the first progress after one: the run so far
  // (--metrics).
  std::function<void(const struct RunSummary&)> on_change;
};

// Where events go: each is one JSON object with "event" and "time" (ISO 8601 UTC). Strings in
// events may hold the job's bytes as they came (a fatal line, a sample line): not always UTF-8.
using EventSink = std::function<void(nlohmann::json event)>;

struct RunSummary {
  int attempts = 0;
  int failures = 0;
  bool gave_up = false;
  bool stopped = false;             // SIGINT/SIGTERM to plumb
  AttemptResult last;
  std::vector<AttemptResult> failed;  // every failed attempt, in order
  std::vector<Recovery> recoveries;   // one per failure, with what followed it
  double seconds = 0;                 // the whole run
};

// Runs attempts until one finishes with exit 0 (summary.last), plumb is stopped, or the restart
// limit is reached (gave_up). Exit code for the CLI: 0 finished, 1 gave up, 130 stopped.
RunSummary supervise(const SuperviseOptions& options, const EventSink& sink);

// The process exit status `plumb run` ends with for `summary`.
int exit_code_of(const RunSummary& summary);

}  // namespace plumb::supervise
