// A JobSet (jobset.x-k8s.io/v1alpha2) that Kueue admits through its kueue.x-k8s.io/queue-name
// label (kueue.sigs.k8s.io/docs/tasks/run/jobsets/): Kueue admits the whole JobSet as one
// workload, so its pods start together or not at all. A launcher Job runs mpirun over the
// workers; a worker Job of N indexed pods runs sshd, one pod a node.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "k8s/job_spec.h"

namespace plumb::k8s {

inline constexpr const char* kKueueLauncher = "launcher";
inline constexpr const char* kKueueWorker = "worker";

// The JobSet, one YAML document.
void emit_kueue_jobset(YAML::Emitter& out, const JobSpec& spec);

// The host name of the last worker pod: <jobset>-<replicated job>-<job index>-<pod index>.
std::string kueue_last_host(const JobSpec& spec);

// The Secret with the ssh keys: --ssh-secret, else NAME-ssh.
std::string ssh_secret(const JobSpec& spec);

}  // namespace plumb::k8s
