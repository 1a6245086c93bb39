// What plumb check node does for a scheduler once its pass is done: `--slurm` (Slurm's
// HealthCheckProgram: drain this node with a "plumb: <check>: <value>" reason, resume only nodes
// plumb drained, never drain more than --max-drain-fraction of a partition) and `--npd` (a
// Kubernetes node-problem-detector custom plugin: its exit codes and one message line).
// docs/check.md.
#pragma once

#include <ostream>
#include <string>

#include "check/node_run.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

// LBNL NHC drains on any failure; plumb's warnings are "worth a look" findings (a clock 10 °C
// warmer than the seed, a setting off the site's value) that a job runs through, so by default
// only a critical drains. docs/check.md.
inline constexpr const char* kDefaultDrainOn = "critical";
// A fault common to every node (a wrong check file, a driver roll-out, a shared file system
// gone) must not drain a partition. Real hardware faults are far rarer: Llama 3's 16,384 H100s
// (2,048 nodes) saw 419 interruptions in 54 days, about 8 a day, well under 1% of the nodes out
// at once; 10% is ten times that and leaves a partition 90% of its nodes. docs/check.md.
inline constexpr double kDefaultMaxDrainFraction = 0.1;
// Each scontrol/sinfo call: a busy slurmctld answers in seconds; three calls plus the pass stay
// well under the 60 s after which slurmd kills its HealthCheckProgram.
inline constexpr double kSlurmToolTimeoutS = 10.0;

struct CheckSchedulerOptions {
  bool slurm = false;
  bool npd = false;
  std::string node;  // --node: the Slurm node name
  std::string drain_on = kDefaultDrainOn;
  double max_drain_fraction = kDefaultMaxDrainFraction;
  size_t npd_max_output = 80;
};

void add_check_scheduler_options(CLI::App& node, CheckSchedulerOptions& options);

// Whether a scheduler mode was asked for.
bool scheduler_mode(const CheckSchedulerOptions& options);

// Acts on `report` for the scheduler asked for, printing what it did on `out`; returns the exit
// code that mode's caller expects.
int act_for_scheduler(const check::NodeReport& report, const CheckSchedulerOptions& options,
                      std::ostream& out);

}  // namespace plumb::cli
