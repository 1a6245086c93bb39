#include "k8s/pod_template.h"

#include "k8s/yaml_emit.h"

namespace plumb::k8s {
namespace {

// The launcher only runs mpirun and stores the record: a core and a little memory, requested so
// that a quota (Kueue's ClusterQueue) counts it.
constexpr const char* kLauncherCpu = "1";
constexpr const char* kLauncherMemory = "1Gi";
// A Ray head also runs Ray's GCS and dashboard: KubeRay's sample for KAI
// (ray-operator/config/samples/ray-cluster.kai-scheduler.yaml) gives it 1 core and 2Gi; 2 and
// 4Gi leave the launcher room beside them. Large clusters need more (docs/k8s.md).
constexpr const char* kRayHeadCpu = "2";
constexpr const char* kRayHeadMemory = "4Gi";
// Secret volume files readable by their owner only (0600), as sshd and ssh want private keys.
constexpr int kKeyMode = 0600;

bool worker(const PodOptions& pod) { return pod.role == Role::kWorker; }

// Host network (RDMA NICs, NCCL's sockets on the fabric) and host IPC (CUDA IPC and shared
// memory across the ranks of a node) on the workers, unless --pod-network.
bool host_network(const JobSpec& spec, const PodOptions& pod) {
  return worker(pod) && !spec.pod_network;
}

void emit_env(YAML::Emitter& out, const PodOptions& pod) {
  if (worker(pod)) return;  // sshd's children do not see a container's env anyway
  key(out, "env");
  out << YAML::BeginSeq;
  const std::pair<const char*, std::string> vars[] = {
      {"OMPI_MCA_plm_rsh_args", ssh_options()},  // mpirun's ssh: the workers' port, no prompts
      {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
      {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
  };
  for (const auto& [name, value] : vars) {
    out << YAML::BeginMap;
    text(out, "name", name);
    text(out, "value", value);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void emit_resources(YAML::Emitter& out, const JobSpec& spec, const PodOptions& pod) {
  key(out, "resources");
  out << YAML::BeginMap;
  if (worker(pod)) {
    // Extended resources are given as limits; the request defaults to the limit.
    key(out, "limits");
    out << YAML::BeginMap;
    number(out, vendor(spec.vendor).resource, spec.devices_per_node);
    out << YAML::EndMap;
  } else {
    key(out, "requests");
    out << YAML::BeginMap;
    text(out, "cpu", pod.ray ? kRayHeadCpu : kLauncherCpu);
    text(out, "memory", pod.ray ? kRayHeadMemory : kLauncherMemory);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_security(YAML::Emitter& out, const PodOptions& pod) {
  if (!worker(pod)) return;
  // RDMA registers (pins) memory: IPC_LOCK lifts the locked-memory limit for it.
  key(out, "securityContext");
  out << YAML::BeginMap;
  key(out, "capabilities");
  out << YAML::BeginMap;
  key(out, "add");
  out << YAML::Flow << YAML::BeginSeq << "IPC_LOCK" << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndMap;
}

void emit_mount(YAML::Emitter& out, const char* name, const std::string& path, bool read_only) {
  out << YAML::BeginMap;
  text(out, "name", name);
  text(out, "mountPath", path);
  if (read_only) flag(out, "readOnly", true);
  out << YAML::EndMap;
}

void emit_mounts(YAML::Emitter& out, const JobSpec& spec, const PodOptions& pod) {
  key(out, "volumeMounts");
  out << YAML::BeginSeq;
  emit_mount(out, "dshm", "/dev/shm", false);
  if (worker(pod)) {
    for (const HostMount& m : vendor(spec.vendor).mounts) emit_mount(out, m.name.c_str(), m.path, true);
  }
  if (!pod.ssh_secret.empty()) emit_mount(out, "ssh-keys", "/root/.ssh", true);
  if (!pod.config_map.empty()) emit_mount(out, "run", kRunDir, true);
  out << YAML::EndSeq;
}

// A literal block scalar reads back with one final newline (YAML's "clip"), so a script is given
// without its own.
void emit_script(YAML::Emitter& out, std::string script) {
  if (!script.empty() && script.back() == '\n') script.pop_back();
  out << YAML::BeginSeq << "/bin/sh" << "-c" << YAML::Literal << script << YAML::EndSeq;
}

void emit_post_start(YAML::Emitter& out, const PodOptions& pod) {
  if (pod.post_start.empty()) return;
  key(out, "lifecycle");
  out << YAML::BeginMap;
  key(out, "postStart");
  out << YAML::BeginMap;
  key(out, "exec");
  out << YAML::BeginMap;
  key(out, "command");
  emit_script(out, pod.post_start);
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
}

void emit_container(YAML::Emitter& out, const JobSpec& spec, const PodOptions& pod) {
  out << YAML::BeginMap;
  text(out, "name", kContainer);
  text(out, "image", spec.image);
  if (!pod.ray) {
    key(out, "command");
    emit_script(out, pod.script);
  }
  emit_post_start(out, pod);
  emit_env(out, pod);
  emit_resources(out, spec, pod);
  emit_security(out, pod);
  emit_mounts(out, spec, pod);
  out << YAML::EndMap;
}

// The Secret's keys as ssh reads them: ssh-privatekey (the key of the kubernetes.io/ssh-auth
// type) as the identity, ssh-publickey as the one authorized key.
void emit_ssh_volume(YAML::Emitter& out, const std::string& secret) {
  out << YAML::BeginMap;
  text(out, "name", "ssh-keys");
  key(out, "secret");
  out << YAML::BeginMap;
  text(out, "secretName", secret);
  number(out, "defaultMode", kKeyMode);
  out << YAML::Comment("0600");
  key(out, "items");
  out << YAML::BeginSeq;
  const std::pair<const char*, const char*> items[] = {{"ssh-privatekey", "id_rsa"},
                                                       {"ssh-publickey", "authorized_keys"}};
  for (const auto& [from, to] : items) {
    out << YAML::BeginMap;
    text(out, "key", from);
    text(out, "path", to);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
}

void emit_volumes(YAML::Emitter& out, const JobSpec& spec, const PodOptions& pod) {
  key(out, "volumes");
  out << YAML::BeginSeq;
  // /dev/shm in memory: a container's default 64 MiB is too small for NCCL's and MPI's
  // shared-memory transports.
  out << YAML::BeginMap;
  text(out, "name", "dshm");
  key(out, "emptyDir");
  out << YAML::BeginMap;
  text(out, "medium", "Memory");
  out << YAML::EndMap << YAML::EndMap;
  if (worker(pod)) {
    for (const HostMount& m : vendor(spec.vendor).mounts) {
      out << YAML::BeginMap;
      text(out, "name", m.name);
      key(out, "hostPath");
      out << YAML::BeginMap;
      text(out, "path", m.path);
      text(out, "type", "Directory");
      out << YAML::EndMap << YAML::EndMap;
    }
  }
  if (!pod.ssh_secret.empty()) emit_ssh_volume(out, pod.ssh_secret);
  if (!pod.config_map.empty()) {
    out << YAML::BeginMap;
    text(out, "name", "run");
    key(out, "configMap");
    out << YAML::BeginMap;
    text(out, "name", pod.config_map);
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

}  // namespace

void emit_pod_spec(YAML::Emitter& out, const JobSpec& spec, const PodOptions& pod) {
  out << YAML::BeginMap;
  if (host_network(spec, pod)) {
    flag(out, "hostNetwork", true);
    flag(out, "hostIPC", true);
    // A pod on the host network resolves cluster names (the job's headless service) only so.
    text(out, "dnsPolicy", "ClusterFirstWithHostNet");
  }
  // Never: a failed container fails its pod, and the scheduler's policy restarts the whole job.
  if (!pod.ray) text(out, "restartPolicy", "Never");
  if (!pod.priority_class.empty()) text(out, "priorityClassName", pod.priority_class);
  key(out, "containers");
  out << YAML::BeginSeq;
  emit_container(out, spec, pod);
  out << YAML::EndSeq;
  emit_volumes(out, spec, pod);
  out << YAML::EndMap;
}

}  // namespace plumb::k8s
