// plumb on a Ray cluster that KubeRay runs (--launcher ray): a RayJob (ray.io/v1) that makes the
// cluster, runs plumb from the head and deletes the cluster after, or a RayCluster that stays up.
// The head is the launcher: it waits for every worker to join Ray, writes mpirun's hostfile from
// Ray's node table and runs the plumb command as the MPI launcher does. The workers start sshd
// (a postStart hook) beside `ray start`. The run script reaches the head as a ConfigMap, so no
// shell quoting stands between it and the RayJob's entrypoint (docs/k8s.md, Ray on Kubernetes).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "k8s/job_spec.h"

namespace plumb::k8s {

// How a gang scheduler finds a KubeRay object: the labels on it. KubeRay's batch scheduler
// plugin (Volcano, KAI) or Kueue's integration reads them; the scheduler itself gangs the head
// and the workers (docs/k8s.md lists each scheduler's source).
struct RayLabels {
  std::string scheduler_name;  // ray.io/scheduler-name's value; empty: no such label
  std::string queue;           // the label naming --queue
  std::string priority;        // the label naming --priority-class; empty: the pods'
                               // priorityClassName
};

inline constexpr const char* kRayWorkerGroup = "worker";
inline constexpr const char* kRayWorkerResource = "plumb_worker";  // a Ray custom resource that
                                                                    // marks plumb's workers
// KubeRay makes a RayJob's cluster <rayjob>-<5 characters> and refuses names over these
// (ray-operator/controllers/ray/utils/constant.go: MaxRayClusterNameLength 53,
// MaxRayJobNameLength = 53 - 6); both must be DNS-1035 labels (a letter first).
inline constexpr int kMaxRayClusterName = 53;
inline constexpr int kMaxRayJobName = kMaxRayClusterName - 6;

// The problems of `spec` with --launcher ray, one a line.
std::vector<std::string> ray_problems(const JobSpec& spec);

// The ConfigMap with the head's script and the RayJob or RayCluster, two YAML documents.
void emit_ray(YAML::Emitter& out, const JobSpec& spec, const RayLabels& labels);

// The head's script: wait for the workers in Ray, the hostfile, then launcher_script's run.
std::string ray_head_script(const JobSpec& spec);

// The workers' postStart hook: host keys and sshd (daemonised) on kSshPort.
std::string ray_worker_sshd();

// The ConfigMap's name and the script's path in it.
std::string ray_config_map(const JobSpec& spec);
inline constexpr const char* kRayScript = "run.sh";

}  // namespace plumb::k8s
