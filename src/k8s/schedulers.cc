#include "k8s/schedulers.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/strings.h"
#include "k8s/kueue_job.h"
#include "k8s/volcano_job.h"

namespace plumb::k8s {
namespace {

const Scheduler* find(const std::string& name) {
  for (const Scheduler& s : schedulers()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

void scheduler_problems(const Scheduler& s, const JobSpec& spec, std::vector<std::string>& out) {
  if (!s.network_topology && (!spec.network_topology.empty() || spec.highest_tier)) {
    out.push_back(fmt::format("--network-topology is Volcano's (HyperNode tiers); --scheduler {} "
                              "has no such constraint: leave it out",
                              s.name));
  }
  if (!s.ssh_secret && !spec.ssh_secret.empty()) {
    out.push_back(fmt::format("--ssh-secret is for --scheduler kueue; --scheduler {} makes the "
                              "keys itself (the ssh plugin)",
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

}  // namespace

const std::vector<Scheduler>& schedulers() {
  static const std::vector<Scheduler> kTable = {
      // Volcano's JobSpec.maxRetry is `json:"maxRetry,omitempty"`, "Defaults to 3"
      // (volcano-sh/apis pkg/apis/batch/v1alpha1/job.go): 0 cannot be told from unset.
      {"volcano", "a Volcano Job (batch.volcano.sh/v1alpha1)", true, false, false,
       volcano_last_host, emit_volcano_job},
      {"kueue", "a JobSet (jobset.x-k8s.io/v1alpha2) queued by Kueue", false, true, true,
       kueue_last_host, emit_kueue_jobset},
  };
  return kTable;
}

std::vector<std::string> scheduler_names() {
  std::vector<std::string> names;
  for (const Scheduler& s : schedulers()) names.push_back(s.name);
  return names;
}

std::vector<std::string> problems(const JobSpec& spec) {
  std::vector<std::string> out;
  const Scheduler* s = find(spec.scheduler);
  if (s == nullptr) {
    out.push_back(unknown_name("--scheduler", "scheduler", spec.scheduler, scheduler_names()));
  }
  for (std::string& p : common_problems(spec)) out.push_back(std::move(p));
  if (s != nullptr) scheduler_problems(*s, spec, out);
  return out;
}

std::string job_manifest(const JobSpec& spec) {
  const std::vector<std::string> found = problems(spec);
  if (!found.empty()) throw Error(join(found, "\n"));
  YAML::Emitter out;
  out.SetIndent(2);
  find(spec.scheduler)->emit(out, spec);
  if (!out.good()) throw std::logic_error("k8s manifest: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

}  // namespace plumb::k8s
