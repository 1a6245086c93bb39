#include "k8s/volcano_job.h"

#include <fmt/format.h>

#include "k8s/pod_template.h"
#include "k8s/yaml_emit.h"

namespace plumb::k8s {
namespace {

void emit_volcano_metadata(YAML::Emitter& out, const JobSpec& spec) {
  key(out, "metadata");
  out << YAML::BeginMap;
  text(out, "name", spec.name);
  if (!spec.namespace_name.empty()) text(out, "namespace", spec.namespace_name);
  key(out, "labels");
  out << YAML::BeginMap;
  text(out, "app.kubernetes.io/name", "plumb");
  out << YAML::EndMap << YAML::EndMap;
}

// Volcano's job plugins (volcano.sh/en/docs/job_plugins/): ssh puts one key pair in every pod's
// /root/.ssh, svc gives the pods DNS names and /etc/volcano/<task>.host, env sets VC_TASK_INDEX.
// The svc plugin's NetworkPolicy admits traffic from the job's pods by pod label, which does not
// match workers on the host network: it is turned off (--disable-network-policy).
void emit_plugins(YAML::Emitter& out) {
  key(out, "plugins");
  out << YAML::BeginMap;
  key(out, "ssh");
  out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
  key(out, "svc");
  out << YAML::Flow << YAML::BeginSeq << "--disable-network-policy=true" << YAML::EndSeq;
  key(out, "env");
  out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
  out << YAML::EndMap;
}

void emit_policy(YAML::Emitter& out, const char* event, const char* action) {
  out << YAML::BeginMap;
  text(out, "event", event);
  text(out, "action", action);
  out << YAML::EndMap;
}

// A pod evicted or failed (a node lost, a rank crashed) restarts the whole job, maxRetry times:
// every rank of an MPI job is needed (volcano.sh/en/docs/how_to_use_job_policy/).
void emit_job_policies(YAML::Emitter& out) {
  key(out, "policies");
  out << YAML::BeginSeq;
  emit_policy(out, "PodEvicted", "RestartJob");
  emit_policy(out, "PodFailed", "RestartJob");
  out << YAML::EndSeq;
}

// The launcher's policies, checked before the job's: its end is the job's end; a verdict exit
// code ends the job without a restart.
void emit_launcher_policies(YAML::Emitter& out) {
  key(out, "policies");
  out << YAML::BeginSeq;
  emit_policy(out, "TaskCompleted", "CompleteJob");
  for (int code : kVerdictCodes) {
    out << YAML::BeginMap;
    number(out, "exitCode", code);
    text(out, "action", "TerminateJob");
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

// networkTopology: the job inside one HyperNode of at most highestTierAllowed (hard), or as
// close as the scheduler can (soft) (volcano.sh/en/docs/network_topology_aware_scheduling/).
void emit_network_topology(YAML::Emitter& out, const JobSpec& spec) {
  if (spec.network_topology.empty()) return;
  key(out, "networkTopology");
  out << YAML::BeginMap;
  text(out, "mode", spec.network_topology);
  if (spec.highest_tier) number(out, "highestTierAllowed", *spec.highest_tier);
  out << YAML::EndMap;
}

void emit_task(YAML::Emitter& out, const JobSpec& spec, const char* name, int replicas,
               const PodOptions& pod) {
  out << YAML::BeginMap;
  text(out, "name", name);
  number(out, "replicas", replicas);
  if (pod.role == Role::kLauncher) emit_launcher_policies(out);
  key(out, "template");
  out << YAML::BeginMap;
  key(out, "spec");
  emit_pod_spec(out, spec, pod);
  out << YAML::EndMap << YAML::EndMap;
}

void emit_volcano_spec(YAML::Emitter& out, const JobSpec& spec) {
  key(out, "spec");
  out << YAML::BeginMap;
  text(out, "schedulerName", "volcano");
  // Gang: no pod starts until every one of them can (the launcher and all the workers).
  number(out, "minAvailable", spec.nodes + 1);
  text(out, "queue", spec.queue);
  if (!spec.priority_class.empty()) text(out, "priorityClassName", spec.priority_class);
  number(out, "maxRetry", spec.max_retry);
  emit_network_topology(out, spec);
  emit_plugins(out);
  emit_job_policies(out);
  key(out, "tasks");
  out << YAML::BeginSeq;
  const std::string hostfile = fmt::format("sed 's/$/ slots={}/' /etc/volcano/{}.host > {}",
                                           spec.devices_per_node, kVolcanoWorker, kHostfile);
  emit_task(out, spec, kVolcanoLauncher, 1,
            pod_options(Role::kLauncher, launcher_script(spec, hostfile), ""));
  emit_task(out, spec, kVolcanoWorker, spec.nodes,
            pod_options(Role::kWorker, worker_script(), ""));
  out << YAML::EndSeq << YAML::EndMap;
}

}  // namespace

void emit_volcano_job(YAML::Emitter& out, const JobSpec& spec) {
  out << YAML::BeginMap;
  text(out, "apiVersion", "batch.volcano.sh/v1alpha1");
  text(out, "kind", "Job");
  emit_volcano_metadata(out, spec);
  emit_volcano_spec(out, spec);
  out << YAML::EndMap;
}

std::string volcano_last_host(const JobSpec& spec) {
  return fmt::format("{}-{}-{}", spec.name, kVolcanoWorker, spec.nodes - 1);
}

}  // namespace plumb::k8s
