// The schedulers plumb k8s job writes for, one entry each: the manifest's builder and what the
// scheduler supports. job_manifest() checks a JobSpec whole (every problem in one message) and
// writes the scheduler's manifest.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "k8s/job_spec.h"

namespace plumb::k8s {

struct Scheduler {
  std::string name;
  std::string kind;                 // what it writes, for --help
  bool network_topology = false;    // takes --network-topology / --highest-tier
  bool ssh_secret = false;          // needs a Secret with ssh keys (no ssh plugin)
  bool zero_retry = true;           // --max-retry 0 means no restart (not "unset")
  std::function<std::string(const JobSpec&)> last_host;  // the longest pod host name
  std::function<void(YAML::Emitter&, const JobSpec&)> emit;
};

const std::vector<Scheduler>& schedulers();
std::vector<std::string> scheduler_names();

// Every problem of `spec` (the common ones, then the scheduler's), one a line; empty when none.
std::vector<std::string> problems(const JobSpec& spec);

// The manifest as YAML text; Error (exit 2) listing every problem when `spec` has any.
std::string job_manifest(const JobSpec& spec);

}  // namespace plumb::k8s
