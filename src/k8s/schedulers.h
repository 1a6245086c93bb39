// The schedulers plumb k8s job writes for, one entry each: the MPI manifest's builder, what the
// scheduler supports, and the labels it gangs a KubeRay object by (--launcher ray). The launchers
// (mpi, ray) are a second table. job_manifest() checks a JobSpec whole (every problem in one
// message) and writes the launcher's manifest for the scheduler.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "k8s/job_spec.h"
#include "k8s/ray_job.h"

namespace plumb::k8s {

struct Scheduler {
  std::string name;
  std::string kind;                 // what it writes with --launcher mpi, for --help
  bool network_topology = false;    // takes --network-topology / --highest-tier
  bool ssh_secret = false;          // needs a Secret with ssh keys (no ssh plugin)
  bool zero_retry = true;           // --max-retry 0 means no restart (not "unset")
  std::function<std::string(const JobSpec&)> last_host;  // the longest pod host name (MPI)
  std::function<void(YAML::Emitter&, const JobSpec&)> emit;  // the MPI job; empty: none
  RayLabels ray;                    // --launcher ray
};

const std::vector<Scheduler>& schedulers();
std::vector<std::string> scheduler_names();

// How the ranks start: mpi (a launcher pod and sshd workers, the scheduler's own job kind) or ray
// (a KubeRay RayJob or RayCluster the scheduler gangs).
struct Launcher {
  std::string name;
  std::string help;
  std::function<void(const Scheduler&, const JobSpec&, std::vector<std::string>&)> problems;
  std::function<void(YAML::Emitter&, const Scheduler&, const JobSpec&)> emit;
};

const std::vector<Launcher>& launchers();
std::vector<std::string> launcher_names();

// Every problem of `spec` (the common ones, then the scheduler's), one a line; empty when none.
std::vector<std::string> problems(const JobSpec& spec);

// The manifest as YAML text; Error (exit 2) listing every problem when `spec` has any.
std::string job_manifest(const JobSpec& spec);

}  // namespace plumb::k8s
