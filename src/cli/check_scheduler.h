// What plumb check node does for a scheduler once its pass is done: `--slurm` (Slurm's
// HealthCheckProgram: drain this node with a "plumb: <check>: <value>" reason, resume only nodes
// plumb drained) and `--npd` (a Kubernetes node-problem-detector custom plugin: its exit codes and
// one message line). docs/check.md, "Deployment".
#pragma once

#include <CLI/CLI.hpp>

#include <ostream>

#include "check/node_run.h"

namespace plumb::cli {

struct CheckSchedulerOptions {
  bool slurm = false;
  bool npd = false;
};

void add_check_scheduler_options(CLI::App& node, CheckSchedulerOptions& options);

// Whether a scheduler mode was asked for.
bool scheduler_mode(const CheckSchedulerOptions& options);

// Acts on `report` for the scheduler asked for, printing what it did on `out`; returns the exit
// code that mode's caller expects.
int act_for_scheduler(const check::NodeReport& report, const CheckSchedulerOptions& options,
                      std::ostream& out);

}  // namespace plumb::cli
