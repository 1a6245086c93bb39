// plumb check node|genconf|list|burn-in|links: node health before and during a run, the deeper
// pass before a job, and the slow node or link across the fleet (docs/check.md). Each subcommand
// lives in its own file and declares itself on `plumb check` (check_subcommands.h).
#pragma once

#include <functional>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct CheckOptions {
  std::function<int()> selected;  // what the chosen subcommand runs
};

void setup_check(CLI::App& app, CheckOptions& options);
// The subcommand's exit code: 0 ok, 1 warning, 2 critical, 3 unknown (the monitoring-plugin
// convention); a check that cannot run at all (bad options, an unreadable check file) is 3.
int run_check(const CheckOptions& options);

}  // namespace plumb::cli
