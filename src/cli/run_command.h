// plumb run [options] -- COMMAND [ARGS...]: supervises a training job — detects a crash, a hang
// or a fatal line, stops its whole process tree, restarts it (docs/run.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/recovery_options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct RunOptions {
  std::vector<std::string> command;
  double hang_timeout_s = 600;
  std::vector<std::string> progress_regex;  // replace the defaults when given
  std::vector<std::string> fatal_regex;     // replace the defaults when given
  std::string heartbeat;
  double kill_grace_s = 10;
  int max_restarts = 3;
  double restart_window_s = 3600;
  double backoff_s = 5;
  std::string events;
  std::string checkpoint_dir;   // restarts resume from its newest complete checkpoint
  std::string resume_arg;       // words added to a restart's command: {checkpoint}, {step}
  RecoveryArgs recovery;        // --recover, --on-failure, ... and --exclude-template
  std::string metrics;          // Prometheus textfile, rewritten after every change
  bool save = false;            // store the recovery baseline
  std::string label;
  std::string db;
  int drill = 0;                // inject this many faults (a recovery drill)
  std::string drill_faults = "kill,hang";
  uint32_t drill_seed = 1;
};

void setup_run(CLI::App& app, RunOptions& options);
int run_run(const RunOptions& options);

}  // namespace plumb::cli
