// The pod template every manifest shares: the launcher (runs mpirun over the workers; a Ray head)
// and the workers (one a node: the devices, sshd, the host network and IPC that RDMA needs).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>

#include "k8s/job_spec.h"

namespace plumb::k8s {

// plumb's verdicts: 1 wrong elements or a regression, 3 too noisy to judge. The run did what it
// was asked; restarting it would only measure again.
inline constexpr int kVerdictCodes[] = {1, 3};

enum class Role { kLauncher, kWorker };

struct PodOptions {
  Role role = Role::kWorker;
  std::string script;      // what the container's /bin/sh runs
  std::string ssh_secret;  // a Secret with the ssh keys to mount at /root/.ssh; empty: none (the
                           // scheduler provides them, as Volcano's ssh plugin does)
  // A KubeRay pod: KubeRay writes its command (ray start) and restart policy, so `script` is empty
  // and neither is written.
  bool ray = false;
  std::string post_start;  // run by the container's postStart hook (a Ray worker's sshd)
  std::string config_map;  // a ConfigMap mounted at kRunDir (the Ray head's run script)
  std::string priority_class;  // the pod's priorityClassName; empty: none
};

// Options with the rest left empty.
inline PodOptions pod_options(Role role, std::string script, std::string ssh_secret) {
  PodOptions pod;
  pod.role = role;
  pod.script = std::move(script);
  pod.ssh_secret = std::move(ssh_secret);
  return pod;
}

// Where a ConfigMap's script is mounted.
inline constexpr const char* kRunDir = "/etc/plumb";

// The pod template's `spec:` value (a map), for `spec`'s vendor, image and network.
void emit_pod_spec(YAML::Emitter& out, const JobSpec& spec, const PodOptions& pod);

// The container's name in every pod (kubectl logs -c).
inline constexpr const char* kContainer = "plumb";

}  // namespace plumb::k8s
