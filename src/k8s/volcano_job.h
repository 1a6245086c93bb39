// A Volcano Job (batch.volcano.sh/v1alpha1) for plumb across nodes, shaped as Volcano's MPI
// example (volcano.sh/en/docs/mpi_on_volcano/): an mpimaster task runs mpirun over the hostfile
// the svc plugin writes (/etc/volcano/mpiworker.host), an mpiworker task runs sshd on every node.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "k8s/job_spec.h"

namespace plumb::k8s {

inline constexpr const char* kVolcanoLauncher = "mpimaster";
inline constexpr const char* kVolcanoWorker = "mpiworker";

// The Job, one YAML document.
void emit_volcano_job(YAML::Emitter& out, const JobSpec& spec);

// The host name of the last worker pod (the svc plugin makes it the pod's name).
std::string volcano_last_host(const JobSpec& spec);

}  // namespace plumb::k8s
