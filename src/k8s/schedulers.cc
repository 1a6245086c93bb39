#include "k8s/schedulers.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/strings.h"
#include "k8s/kueue_job.h"
#include "k8s/volcano_job.h"

namespace plumb::k8s {
namespace {

template <typename Table>
const typename Table::value_type* find(const Table& table, const std::string& name) {
  for (const auto& entry : table) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

// What --launcher mpi asks of the scheduler.
void mpi_problems(const Scheduler& s, const JobSpec& spec, std::vector<std::string>& out) {
  if (!s.emit) {
    out.push_back(fmt::format("--scheduler {} gangs KubeRay objects here: give --launcher ray "
                              "(plumb writes no MPI job for it)",
                              s.name));
    return;
  }
  if (!spec.ray_kind.empty()) out.push_back("--ray-kind is for --launcher ray");
  if (!s.network_topology && (!spec.network_topology.empty() || spec.highest_tier)) {
    out.push_back(fmt::format("--network-topology is Volcano's (HyperNode tiers); --scheduler {} "
                              "has no such constraint: leave it out",
                              s.name));
  }
  if (!s.ssh_secret && !spec.ssh_secret.empty()) {
    out.push_back(fmt::format("--ssh-secret is for --scheduler kueue or --launcher ray; "
                              "--scheduler {} makes the keys itself (the ssh plugin)",
                              s.name));
  }
  if (!s.zero_retry && spec.max_retry == 0) {
    out.push_back(fmt::format("--max-retry 0: a {} Job takes maxRetry 0 as unset, its default 3; "
                              "give 1 to {}",
                              s.name, kMaxRetry));
  }
  // Pod host names are DNS labels; a name valid alone can still make them too long.
  if (is_dns_label(spec.name) && spec.nodes >= 1) {
    const std::string host = s.last_host(spec);
    if (host.size() > static_cast<size_t>(kMaxHostName)) {
      out.push_back(fmt::format("--name '{}': the last worker's host name {} would be {} "
                                "characters; a host name has at most {}",
                                spec.name, host, host.size(), kMaxHostName));
    }
  }
}

void emit_mpi(YAML::Emitter& out, const Scheduler& s, const JobSpec& spec) { s.emit(out, spec); }

// What --launcher ray asks: the same of every scheduler (the labels differ, not the checks).
void ray_launcher_problems(const Scheduler&, const JobSpec& spec, std::vector<std::string>& out) {
  for (std::string& p : ray_problems(spec)) out.push_back(std::move(p));
}

void emit_ray_launcher(YAML::Emitter& out, const Scheduler& s, const JobSpec& spec) {
  emit_ray(out, spec, s.ray);
}

}  // namespace

const std::vector<Scheduler>& schedulers() {
  static const std::vector<Scheduler> kTable = {
      // Volcano's JobSpec.maxRetry is `json:"maxRetry,omitempty"`, "Defaults to 3"
      // (volcano-sh/apis pkg/apis/batch/v1alpha1/job.go): 0 cannot be told from unset.
      // Ray: KubeRay's Volcano plugin picks the object by ray.io/scheduler-name and makes its
      // PodGroup (queue, priority class) from the other two labels (ray-operator/controllers/
      // ray/batchscheduler/volcano/volcano_scheduler.go).
      {"volcano", "a Volcano Job (batch.volcano.sh/v1alpha1)", true, false, false,
       volcano_last_host, emit_volcano_job,
       {"volcano", "volcano.sh/queue-name", "ray.io/priority-class-name"}},
      // Ray: Kueue admits a RayJob or RayCluster by its LocalQueue label
      // (kueue.sigs.k8s.io/docs/tasks/run/rayjobs/).
      {"kueue", "a JobSet (jobset.x-k8s.io/v1alpha2) queued by Kueue", false, true, true,
       kueue_last_host, emit_kueue_jobset,
       {"", "kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class"}},
      // KubeRay's KAI plugin sets schedulerName kai-scheduler and copies the queue label to the
      // pods; KAI's PodGrouper makes the PodGroup (kai-scheduler/kai_scheduler.go). The priority
      // is the pods' own priorityClassName.
      {"kai", "--launcher ray only: KAI's PodGrouper gangs the RayJob or RayCluster", false,
       false, true, nullptr, nullptr, {"", "kai.scheduler/queue", ""}},
  };
  return kTable;
}

const std::vector<Launcher>& launchers() {
  static const std::vector<Launcher> kTable = {
      {"mpi", "a launcher pod runs mpirun over sshd workers, in the scheduler's own job kind",
       mpi_problems, emit_mpi},
      {"ray", "a KubeRay RayJob (--ray-kind job) or RayCluster (cluster) that the scheduler gangs",
       ray_launcher_problems, emit_ray_launcher},
  };
  return kTable;
}

std::vector<std::string> launcher_names() {
  std::vector<std::string> names;
  for (const Launcher& l : launchers()) names.push_back(l.name);
  return names;
}

std::vector<std::string> scheduler_names() {
  std::vector<std::string> names;
  for (const Scheduler& s : schedulers()) names.push_back(s.name);
  return names;
}

std::vector<std::string> problems(const JobSpec& spec) {
  std::vector<std::string> out;
  const Scheduler* s = find(schedulers(), spec.scheduler);
  if (s == nullptr) {
    out.push_back(unknown_name("--scheduler", "scheduler", spec.scheduler, scheduler_names()));
  }
  const Launcher* l = find(launchers(), spec.launcher);
  if (l == nullptr) {
    out.push_back(unknown_name("--launcher", "launcher", spec.launcher, launcher_names()));
  }
  for (std::string& p : common_problems(spec)) out.push_back(std::move(p));
  if (s != nullptr && l != nullptr) l->problems(*s, spec, out);
  return out;
}

std::string job_manifest(const JobSpec& spec) {
  const std::vector<std::string> found = problems(spec);
  if (!found.empty()) throw Error(join(found, "\n"));
  YAML::Emitter out;
  out.SetIndent(2);
  find(launchers(), spec.launcher)->emit(out, *find(schedulers(), spec.scheduler), spec);
  if (!out.good()) throw std::logic_error("k8s manifest: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

}  // namespace plumb::k8s
