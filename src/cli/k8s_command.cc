#include "cli/k8s_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "cli/command.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/strings.h"
#include "k8s/schedulers.h"

namespace plumb::cli {
namespace {

// The pods run a plumb command: its first word must name one.
void check_plumb_command(const k8s::JobSpec& job, std::vector<std::string>& problems) {
  const std::string word = k8s::plumb_command(job).front();
  std::vector<std::string> names;
  for (const Command& c : commands()) names.push_back(c.name);
  if (std::find(names.begin(), names.end(), word) == names.end()) {
    problems.push_back(unknown_name("-- COMMAND", "plumb command", word, names));
  }
}

void setup_job(CLI::App& job, k8s::JobSpec& o, std::string& output) {
  job.add_option("--nodes", o.nodes, "Nodes, one worker pod each")->required();
  job.add_option("--devices-per-node", o.devices_per_node,
                 "Accelerators each worker pod asks for (ranks = nodes × this)")
      ->required();
  job.add_option("--vendor", o.vendor, "nvidia (nvidia.com/gpu) or ascend (huawei.com/Ascend910)")
      ->capture_default_str();
  job.add_option("--image", o.image, "An image with plumb, OpenMPI and sshd that every node can pull")
      ->capture_default_str();
  std::vector<std::string> schedulers;
  for (const k8s::Scheduler& s : k8s::schedulers()) {
    schedulers.push_back(fmt::format("{}: {}", s.name, s.kind));
  }
  job.add_option("--scheduler", o.scheduler, join(schedulers, "; "))->capture_default_str();
  std::vector<std::string> launchers;
  for (const k8s::Launcher& l : k8s::launchers()) launchers.push_back(fmt::format("{}: {}", l.name, l.help));
  job.add_option("--launcher", o.launcher, join(launchers, "; "))->capture_default_str();
  job.add_option("--ray-kind", o.ray_kind,
                 "--launcher ray: job (a RayJob that runs the command and goes; default) or "
                 "cluster (a RayCluster that stays up)");
  job.add_option("--queue", o.queue, "Volcano queue, Kueue LocalQueue or KAI queue")
      ->capture_default_str();
  job.add_option("--priority-class", o.priority_class,
                 "Volcano, KAI: a PriorityClass; Kueue: a WorkloadPriorityClass");
  job.add_option("--namespace", o.namespace_name, "Namespace (default: kubectl's current one)");
  job.add_option("--name", o.name, "The job's name (its pods' host names start with it)")
      ->capture_default_str();
  job.add_option("--network-topology", o.network_topology,
                 "Volcano: hard (the job within one HyperNode) or soft (as close as possible)");
  job.add_option("--highest-tier", o.highest_tier,
                 "Volcano: the highest HyperNode tier the job may span (needed with hard)");
  job.add_option("--max-retry", o.max_retry, "Restarts of the whole job after a pod failed")
      ->capture_default_str();
  job.add_flag("--pod-network", o.pod_network,
               "Workers on the pod network instead of the host's (no RDMA unless the CNI gives it)");
  job.add_option("--ssh-secret", o.ssh_secret,
                 "Kueue, --launcher ray: the Secret holding ssh-privatekey and ssh-publickey "
                 "(default NAME-ssh)");
  job.add_option("-o,--output", output, "Write the YAML here (- for standard output)")
      ->capture_default_str();
  job.add_option("command", o.command,
                 "After --: the plumb command every run gets (default: baseline)");
  job.footer("Example: plumb k8s job --nodes 4 --devices-per-node 8 -o job.yaml -- baseline "
             "--quick\nRay: plumb k8s job --launcher ray --scheduler kueue --nodes 4 "
             "--devices-per-node 8 -o rayjob.yaml\nThen: kubectl apply -f job.yaml (docs/k8s.md).\n"
             "Exit status: 0 written; 2 bad usage (an unknown scheduler or vendor, a count out of "
             "range, a name Kubernetes refuses).");
}

}  // namespace

void setup_k8s(CLI::App& app, K8sCommandOptions& o) {
  app.require_subcommand(1);
  CLI::App* job = app.add_subcommand(
      "job", "The manifest that runs plumb across N nodes under Volcano, Kueue or KAI (gang-scheduled; "
      "MPI or KubeRay)");
  setup_job(*job, o.job, o.output);
}

int run_k8s(const K8sCommandOptions& o) {
  std::vector<std::string> problems = k8s::problems(o.job);
  check_plumb_command(o.job, problems);
  if (!problems.empty()) throw Error(join(problems, "\n"));
  write_output("-o", o.output, k8s::job_manifest(o.job));
  return 0;
}

}  // namespace plumb::cli
