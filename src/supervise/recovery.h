// The recovery steps `plumb run` runs after a failure, before the restart (--recover, --vendor,
// --devices, --on-failure, --recover-timeout, --exclude-template; docs/run.md "Recovery steps"):
// clear-cache (stop the processes still holding the devices), reset-device, link-check (the
// RDMA/RoCE links are up again), each through the vendor's tool from a table of strategies
// (recovery_vendors.cc), then the site's own commands. Each step is timed and reported as one
// recovery_step event; a link that stays down makes this host unusable for the relaunch.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "supervise/recovery_record.h"

namespace plumb::supervise {

struct RecoveryConfig {
  std::vector<std::string> steps;        // --recover "clear-cache,reset-device,link-check", in order
  std::string vendor = "auto";           // --vendor auto|nvidia|ascend
  std::string devices;                   // --devices "0,1,3"; empty: every device the tool lists
  std::vector<std::string> on_failure;   // --on-failure CMD (repeatable): /bin/sh -c, after the steps
  double step_timeout_s = 300;           // --recover-timeout: per step
  std::string exclude_template;          // --exclude-template "--exclude={hosts}"; empty: none
  // Link-check: a link found down is looked at again this many times, this far apart, before the
  // host is declared unusable (a port takes a few seconds to train after a reset).
  int link_rechecks = 3;
  double link_recheck_interval_s = 5;
  double kill_grace_s = 5;               // clear-cache: SIGTERM, then SIGKILL after this long
  std::string sysfs_root;                // "" → $PLUMB_SYSFS_ROOT, else /sys (NVIDIA link-check)
};

// A validated RecoveryConfig; the vendor resolved ("" when only --on-failure steps run).
struct RecoveryPlan {
  std::vector<std::string> steps;
  std::string vendor;                    // "nvidia" | "ascend" | ""
  std::vector<int> devices;              // empty: all
  std::vector<std::string> on_failure;
  double step_timeout_s = 300;
  std::string exclude_template;
  int link_rechecks = 3;
  double link_recheck_interval_s = 5;
  double kill_grace_s = 5;
  std::string sysfs_root = "/sys";
  std::string host;                      // this host's name (gethostname)

  bool empty() const { return steps.empty() && on_failure.empty(); }
};

// Validates `config`: throws plumb::Error (exit 2) for an unknown step, a bad --devices list, a
// bad --vendor, a vendor tool that is not in PATH, a --recover-timeout that is not positive, or
// an --exclude-template naming neither {host} nor {hosts}.
RecoveryPlan make_recovery_plan(const RecoveryConfig& config);

struct RecoveryOutcome {
  std::vector<RecoveryStepTiming> steps;     // one per step run, seconds on the steady clock
  std::vector<std::string> unusable_hosts;   // this host when a link stayed down, plus hosts a
                                             // site command named ("plumb: unusable host NAME")
  std::vector<std::string> down_devices;     // the devices (ports) whose link stayed down
  bool stopped = false;                      // *stop became true: the steps were cut short
};

// Runs the plan's steps in order, then its --on-failure commands. Each step gives one event to
// `sink`: {"event":"recovery_step","time","name","seconds","ok","detail","output_tail",
// "devices":[...]} plus "down":[...] for link-check and "command" for an --on-failure step.
// Returns early when *stop becomes true (the running tool's process group is killed).
RecoveryOutcome run_recovery(const RecoveryPlan& plan,
                             const std::function<void(nlohmann::json)>& sink,
                             const std::atomic<bool>* stop);

// The relaunch's command line without `hosts`: the words of `tmpl` ("--exclude={hosts}") with
// {hosts} and {host} replaced by the hosts, sorted, unique and comma-joined, inserted after
// argv[0] (the launcher, e.g. srun). No hosts or no template: argv unchanged.
std::vector<std::string> with_exclusions(const std::vector<std::string>& argv,
                                         const std::string& tmpl,
                                         const std::vector<std::string>& hosts);

// The names --recover knows, in the order the docs list them.
const std::vector<std::string>& recovery_step_names();

}  // namespace plumb::supervise
