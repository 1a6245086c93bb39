#include "k8s/kueue_job.h"

#include <fmt/format.h>

#include "k8s/pod_template.h"
#include "k8s/yaml_emit.h"

namespace plumb::k8s {
namespace {

void emit_jobset_metadata(YAML::Emitter& out, const JobSpec& spec) {
  key(out, "metadata");
  out << YAML::BeginMap;
  text(out, "name", spec.name);
  if (!spec.namespace_name.empty()) text(out, "namespace", spec.namespace_name);
  key(out, "labels");
  out << YAML::BeginMap;
  text(out, "app.kubernetes.io/name", "plumb");
  // The LocalQueue that admits it, and the WorkloadPriorityClass it is queued and preempted by
  // (kueue.sigs.k8s.io/docs/concepts/workload_priority_class/).
  text(out, "kueue.x-k8s.io/queue-name", spec.queue);
  if (!spec.priority_class.empty()) text(out, "kueue.x-k8s.io/priority-class", spec.priority_class);
  out << YAML::EndMap << YAML::EndMap;
}

// A verdict exit code of the launcher fails its Job by the pod failure policy (batch/v1
// podFailurePolicy), and that reason fails the JobSet without a restart; any other failure
// restarts the whole JobSet (every Job recreated), maxRestarts times.
void emit_failure_policy(YAML::Emitter& out, const JobSpec& spec) {
  key(out, "failurePolicy");
  out << YAML::BeginMap;
  number(out, "maxRestarts", spec.max_retry);
  key(out, "rules");
  out << YAML::BeginSeq << YAML::BeginMap;
  text(out, "name", "verdict");
  text(out, "action", "FailJobSet");
  key(out, "onJobFailureReasons");
  out << YAML::Flow << YAML::BeginSeq << "PodFailurePolicy" << YAML::EndSeq;
  key(out, "targetReplicatedJobs");
  out << YAML::Flow << YAML::BeginSeq << kKueueLauncher << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
}

void emit_pod_failure_policy(YAML::Emitter& out) {
  key(out, "podFailurePolicy");
  out << YAML::BeginMap;
  key(out, "rules");
  out << YAML::BeginSeq << YAML::BeginMap;
  text(out, "action", "FailJob");
  key(out, "onExitCodes");
  out << YAML::BeginMap;
  text(out, "containerName", kContainer);
  text(out, "operator", "In");
  key(out, "values");
  out << YAML::Flow << YAML::BeginSeq;
  for (int code : kVerdictCodes) out << code;
  out << YAML::EndSeq << YAML::EndMap;
  out << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
}

// One replicated Job of `pods` pods started at once (parallelism = completions); the workers'
// pods are indexed, so that each has a stable host name.
void emit_replicated_job(YAML::Emitter& out, const JobSpec& spec, const char* name, int pods,
                         const PodOptions& pod) {
  out << YAML::BeginMap;
  text(out, "name", name);
  number(out, "replicas", 1);
  key(out, "template");
  out << YAML::BeginMap;
  key(out, "spec");
  out << YAML::BeginMap;
  number(out, "parallelism", pods);
  number(out, "completions", pods);
  if (pod.role == Role::kWorker) text(out, "completionMode", "Indexed");
  number(out, "backoffLimit", 0);  // a failed pod fails the Job; the JobSet restarts all of it
  if (pod.role == Role::kLauncher) emit_pod_failure_policy(out);
  key(out, "template");
  out << YAML::BeginMap;
  key(out, "spec");
  emit_pod_spec(out, spec, pod);
  out << YAML::EndMap;  // the pod template
  out << YAML::EndMap << YAML::EndMap;  // the Job's spec, its template
  out << YAML::EndMap;  // the replicated Job
}

void emit_jobset_spec(YAML::Emitter& out, const JobSpec& spec) {
  key(out, "spec");
  out << YAML::BeginMap;
  flag(out, "suspend", true);  // Kueue starts it once admitted
  // Pod host names <jobset>-<job>-<index>-<pod>.<jobset> through a headless service, known
  // before the pods are ready (the launcher waits for each worker's sshd itself).
  key(out, "network");
  out << YAML::BeginMap;
  flag(out, "enableDNSHostnames", true);
  flag(out, "publishNotReadyAddresses", true);
  out << YAML::EndMap;
  // The JobSet is done when the launcher is: the workers' sshd never exits by itself.
  key(out, "successPolicy");
  out << YAML::BeginMap;
  text(out, "operator", "All");
  key(out, "targetReplicatedJobs");
  out << YAML::Flow << YAML::BeginSeq << kKueueLauncher << YAML::EndSeq;
  out << YAML::EndMap;
  emit_failure_policy(out, spec);
  key(out, "replicatedJobs");
  out << YAML::BeginSeq;
  const std::string hostfile = fmt::format(
      "for i in $(seq 0 {last}); do echo \"{name}-{worker}-0-$i.{name} slots={slots}\"; done > {file}",
      fmt::arg("last", spec.nodes - 1), fmt::arg("name", spec.name),
      fmt::arg("worker", kKueueWorker), fmt::arg("slots", spec.devices_per_node),
      fmt::arg("file", kHostfile));
  const std::string secret = ssh_secret(spec);
  emit_replicated_job(out, spec, kKueueLauncher, 1,
                      pod_options(Role::kLauncher, launcher_script(spec, hostfile), secret));
  emit_replicated_job(out, spec, kKueueWorker, spec.nodes,
                      pod_options(Role::kWorker, worker_script(), secret));
  out << YAML::EndSeq << YAML::EndMap;
}

}  // namespace

void emit_kueue_jobset(YAML::Emitter& out, const JobSpec& spec) {
  out << YAML::BeginMap;
  text(out, "apiVersion", "jobset.x-k8s.io/v1alpha2");
  text(out, "kind", "JobSet");
  emit_jobset_metadata(out, spec);
  emit_jobset_spec(out, spec);
  out << YAML::EndMap;
}

std::string kueue_last_host(const JobSpec& spec) {
  return fmt::format("{}-{}-0-{}", spec.name, kKueueWorker, spec.nodes - 1);
}

std::string ssh_secret(const JobSpec& spec) {
  return spec.ssh_secret.empty() ? spec.name + "-ssh" : spec.ssh_secret;
}

}  // namespace plumb::k8s
