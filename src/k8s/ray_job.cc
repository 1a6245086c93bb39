#include "k8s/ray_job.h"

#include <fmt/format.h>

#include "common/strings.h"
#include "k8s/kueue_job.h"
#include "k8s/pod_template.h"
#include "k8s/yaml_emit.h"

namespace plumb::k8s {
namespace {

// How long the head waits for the workers to join Ray: tries × seconds apart, as long as the
// launcher waits for their sshd (10 minutes: an image pulled on every node first).
constexpr int kJoinTries = 300;
constexpr int kJoinPause = 2;
constexpr int kJoinFailed = 75;  // EX_TEMPFAIL, as the wait for sshd

bool is_cluster(const JobSpec& spec) { return spec.ray_kind == "cluster"; }

void emit_labels(YAML::Emitter& out, const JobSpec& spec, const RayLabels& labels) {
  key(out, "labels");
  out << YAML::BeginMap;
  text(out, "app.kubernetes.io/name", "plumb");
  if (!labels.scheduler_name.empty()) text(out, "ray.io/scheduler-name", labels.scheduler_name);
  text(out, labels.queue, spec.queue);
  if (!labels.priority.empty() && !spec.priority_class.empty()) {
    text(out, labels.priority, spec.priority_class);
  }
  out << YAML::EndMap;
}

void emit_metadata(YAML::Emitter& out, const JobSpec& spec, const std::string& name,
                   const RayLabels* labels) {
  key(out, "metadata");
  out << YAML::BeginMap;
  text(out, "name", name);
  if (!spec.namespace_name.empty()) text(out, "namespace", spec.namespace_name);
  if (labels != nullptr) {
    emit_labels(out, spec, *labels);
  } else {
    key(out, "labels");
    out << YAML::BeginMap;
    text(out, "app.kubernetes.io/name", "plumb");
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_config_map(YAML::Emitter& out, const JobSpec& spec) {
  out << YAML::BeginMap;
  text(out, "apiVersion", "v1");
  text(out, "kind", "ConfigMap");
  emit_metadata(out, spec, ray_config_map(spec), nullptr);
  key(out, "data");
  out << YAML::BeginMap;
  std::string script = ray_head_script(spec);
  script.pop_back();  // a literal block reads back with its one final newline
  key(out, kRayScript);
  out << YAML::Literal << script;
  out << YAML::EndMap << YAML::EndMap;
}

using Params = std::vector<std::pair<const char*, std::string>>;

void emit_start_params(YAML::Emitter& out, const Params& params) {
  key(out, "rayStartParams");
  out << YAML::BeginMap;
  for (const auto& [name, value] : params) text(out, name, value);
  out << YAML::EndMap;
}

std::string pod_priority(const JobSpec& spec, const RayLabels& labels) {
  return labels.priority.empty() ? spec.priority_class : "";
}

// The head: no devices, on the pod network, the launcher's env and ssh keys, the run script.
// num-cpus 0 keeps Ray's tasks off it (Ray's advice for large clusters); the dashboard listens
// on every address, as ray job submit reaches it through the head's service.
void emit_head(YAML::Emitter& out, const JobSpec& spec, const RayLabels& labels) {
  key(out, "headGroupSpec");
  out << YAML::BeginMap;
  emit_start_params(out, {{"num-cpus", "0"}, {"dashboard-host", "0.0.0.0"}});
  key(out, "template");
  out << YAML::BeginMap;
  key(out, "spec");
  PodOptions pod = pod_options(Role::kLauncher, "", ssh_secret(spec));
  pod.ray = true;
  pod.config_map = ray_config_map(spec);
  pod.priority_class = pod_priority(spec, labels);
  emit_pod_spec(out, spec, pod);
  out << YAML::EndMap << YAML::EndMap;
}

// The workers: a fixed group, replicas = minReplicas = maxReplicas = --nodes, so that the gang
// (head + minReplicas) is every pod and no autoscaler changes the rank count under plumb.
void emit_workers(YAML::Emitter& out, const JobSpec& spec, const RayLabels& labels) {
  key(out, "workerGroupSpecs");
  out << YAML::BeginSeq << YAML::BeginMap;
  text(out, "groupName", kRayWorkerGroup);
  number(out, "replicas", spec.nodes);
  number(out, "minReplicas", spec.nodes);
  number(out, "maxReplicas", spec.nodes);
  // KubeRay passes the value to ray start --resources as it is: a JSON object in quotes, written
  // in single quotes as KubeRay's docs do.
  key(out, "rayStartParams");
  out << YAML::BeginMap;
  key(out, "resources");
  out << YAML::SingleQuoted << fmt::format("\"{{\\\"{}\\\": 1}}\"", kRayWorkerResource);
  out << YAML::EndMap;
  key(out, "template");
  out << YAML::BeginMap;
  key(out, "spec");
  PodOptions pod = pod_options(Role::kWorker, "", ssh_secret(spec));
  pod.ray = true;
  pod.post_start = ray_worker_sshd();
  pod.priority_class = pod_priority(spec, labels);
  emit_pod_spec(out, spec, pod);
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
}

void emit_cluster_spec(YAML::Emitter& out, const JobSpec& spec, const RayLabels& labels) {
  out << YAML::BeginMap;
  flag(out, "enableInTreeAutoscaling", false);
  emit_head(out, spec, labels);
  emit_workers(out, spec, labels);
  out << YAML::EndMap;
}

// The RayJob: the head runs the script; the cluster goes when it ends (Kueue admits no RayJob
// that keeps it, and a kept cluster holds its devices); a failed run is tried again
// backoffLimit times, each on a new cluster.
void emit_job_spec(YAML::Emitter& out, const JobSpec& spec, const RayLabels& labels) {
  key(out, "spec");
  out << YAML::BeginMap;
  text(out, "entrypoint", fmt::format("sh {}/{}", kRunDir, kRayScript));
  flag(out, "shutdownAfterJobFinishes", true);
  number(out, "backoffLimit", spec.max_retry);
  key(out, "rayClusterSpec");
  emit_cluster_spec(out, spec, labels);
  out << YAML::EndMap;
}

}  // namespace

std::vector<std::string> ray_problems(const JobSpec& spec) {
  std::vector<std::string> out;
  const std::vector<std::string> kinds = {"job", "cluster"};
  if (!spec.ray_kind.empty() && spec.ray_kind != "job" && spec.ray_kind != "cluster") {
    out.push_back(unknown_name("--ray-kind", "kind", spec.ray_kind, kinds));
  }
  if (!spec.network_topology.empty() || spec.highest_tier) {
    out.push_back("--network-topology is for --launcher mpi under Volcano: KubeRay makes the "
                  "PodGroup itself and sets no network topology on it");
  }
  const bool cluster = is_cluster(spec);
  const int most = cluster ? kMaxRayClusterName : kMaxRayJobName;
  const bool letter_first = !spec.name.empty() && spec.name[0] >= 'a' && spec.name[0] <= 'z';
  if (is_dns_label(spec.name) && (spec.name.size() > static_cast<size_t>(most) || !letter_first)) {
    out.push_back(fmt::format("--name '{}': KubeRay takes a {} name of at most {} characters "
                              "beginning with a letter",
                              spec.name, cluster ? "RayCluster" : "RayJob", most));
  }
  return out;
}

void emit_ray(YAML::Emitter& out, const JobSpec& spec, const RayLabels& labels) {
  emit_config_map(out, spec);
  out << YAML::BeginDoc;
  out << YAML::BeginMap;
  text(out, "apiVersion", "ray.io/v1");
  text(out, "kind", is_cluster(spec) ? "RayCluster" : "RayJob");
  emit_metadata(out, spec, spec.name, &labels);
  if (is_cluster(spec)) {
    key(out, "spec");
    emit_cluster_spec(out, spec, labels);
  } else {
    emit_job_spec(out, spec, labels);
  }
  out << YAML::EndMap;
}

std::string ray_head_script(const JobSpec& spec) {
  const std::string hostfile = fmt::format(
      "python3 - <<'PY'\n"
      "import sys, time\n"
      "import ray\n"
      "ray.init(address=\"auto\", logging_level=\"ERROR\")\n"
      "hosts = []\n"
      "for _ in range({tries}):\n"
      "    hosts = [n[\"NodeManagerAddress\"] for n in ray.nodes()\n"
      "             if n[\"Alive\"] and n[\"Resources\"].get(\"{resource}\")]\n"
      "    if len(hosts) >= {nodes}:\n"
      "        break\n"
      "    time.sleep({pause})\n"
      "else:\n"
      "    print(\"plumb: %d of {nodes} Ray workers joined after {seconds} s\" % len(hosts), "
      "file=sys.stderr)\n"
      "    sys.exit({failed})\n"
      "with open(\"{file}\", \"w\") as f:\n"
      "    f.writelines(\"%s slots={slots}\\n\" % h for h in sorted(hosts))\n"
      "PY",
      fmt::arg("tries", kJoinTries), fmt::arg("resource", kRayWorkerResource),
      fmt::arg("nodes", spec.nodes), fmt::arg("pause", kJoinPause),
      fmt::arg("seconds", kJoinTries * kJoinPause), fmt::arg("failed", kJoinFailed),
      fmt::arg("file", kHostfile), fmt::arg("slots", spec.devices_per_node));
  return launcher_script(spec, hostfile);
}

std::string ray_worker_sshd() {
  return fmt::format(
      "mkdir -p /run/sshd\nssh-keygen -A\n/usr/sbin/sshd -e -p {} -o StrictModes=no\n", kSshPort);
}

std::string ray_config_map(const JobSpec& spec) { return spec.name + "-run"; }

}  // namespace plumb::k8s
