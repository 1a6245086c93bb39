// The supervisor as the CLI drives it, shared by `plumb run` and `plumb baseline --workload`: the
// supervision options (--hang-timeout, --checkpoint-dir, --recover, --drill, ...), the console
// lines, checkpoint resume, the drill and its verdict, --events and --metrics (docs/run.md).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli/run_command.h"
#include "supervise/attempt.h"
#include "supervise/drill.h"
#include "supervise/recovery_record.h"
#include "supervise/supervisor.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

// The options that say how a job is supervised: all of plumb run's but COMMAND, --save, --label,
// --db, --events and --metrics (which plumb baseline sets itself).
void add_supervision_options(CLI::App& app, RunOptions& options);

// What a caller adds to a supervised run.
struct JobHooks {
  const char* who = "plumb run";  // the console lines' prefix
  // Set in every attempt's environment, after plumb's own variables.
  std::vector<std::pair<std::string, std::string>> env;
  // Before the first attempt and every restart (e.g. a fresh MASTER_PORT).
  std::function<void(supervise::AttemptOptions& next)> before_attempt;
  // Every event; true when the job has done what it was run for: plumb stops its tree, and that
  // stop is not a failure (RunSummary::stopped is false then). Every progress line makes an event
  // when set.
  std::function<bool(const nlohmann::json& event, const supervise::Drill* drill)> done;
};

struct SupervisedRun {
  supervise::RunSummary summary;
  supervise::RecoveryBaseline baseline;  // plumb.recovery/1 as plumb run --save stores it
  bool reached = false;                  // stopped because JobHooks::done said so
  bool drill = false;
  int exit_code = 0;                     // plumb run's: the drill's verdict with --drill
};

// Runs o.command under the supervisor until it finishes, gives up, is stopped by a signal or
// `hooks.done`; prints the recovery table and the closing lines on stderr. Bad options (a pattern
// RE2 refuses, a drill of hangs without --hang-timeout, an --events file that cannot be written)
// are Errors, exit 2, before the job starts.
SupervisedRun supervise_job(const RunOptions& o, const JobHooks& hooks);

}  // namespace plumb::cli
