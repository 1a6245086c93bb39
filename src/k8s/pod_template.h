// The pod template both schedulers share: the launcher (runs mpirun over the workers) and the
// workers (one a node: the devices, sshd, the host network and IPC that RDMA needs).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "k8s/job_spec.h"

namespace plumb::k8s {

enum class Role { kLauncher, kWorker };

struct PodOptions {
  Role role = Role::kWorker;
  std::string script;      // what the container's /bin/sh runs
  std::string ssh_secret;  // a Secret with the ssh keys to mount at /root/.ssh; empty: none (the
                           // scheduler provides them, as Volcano's ssh plugin does)
};

// The pod template's `spec:` value (a map), for `spec`'s vendor, image and network.
void emit_pod_spec(YAML::Emitter& out, const JobSpec& spec, const PodOptions& pod);

// The container's name in every pod (kubectl logs -c).
inline constexpr const char* kContainer = "plumb";

}  // namespace plumb::k8s
