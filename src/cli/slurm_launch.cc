#include "cli/slurm_launch.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>

#include "common/environment.h"
#include "common/error.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "supervise/tool_process.h"

namespace plumb::cli {
namespace {

constexpr double kProbeSeconds = 30;  // srun --mpi=list asks slurmctld nothing; ompi_info is local

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool any_starts_with(const std::vector<std::string>& list,
                     std::initializer_list<const char*> prefixes) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& s) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](const char* p) { return s.rfind(p, 0) == 0; });
  });
}

// One way for a step's ranks to wire up: srun offers `plugin` and OpenMPI has a matching client.
struct WireUpRule {
  const char* plugin;  // in srun --mpi=list
  std::function<bool(const std::vector<std::string>&)> openmpi_has;
};

// OpenMPI 4's PMIx clients are ext2x/ext3x (an external PMIx, Debian's) or pmix3x/pmix4x (its
// own); its PMI-2 client is s2 (built --with-pmi only). Open MPI FAQ, "Running jobs under Slurm".
const WireUpRule kRules[] = {
    {"pmix", [](const auto& c) { return any_starts_with(c, {"ext", "pmix"}); }},
    {"pmi2", [](const auto& c) { return contains(c, "s2"); }},
};

std::string probe(const std::string& shell_command, const std::string& why_needed) {
  const std::optional<ProcessResult> r =
      run_with_timeout({"sh", "-c", shell_command}, kProbeSeconds);
  if (!r) {
    throw Error(fmt::format("--launcher slurm: '{}' did not answer within {:.0f} s ({})",
                            shell_command, kProbeSeconds, why_needed));
  }
  return r->exit_code == 0 ? r->output : "";
}

}  // namespace

std::vector<std::string> srun_mpi_plugins(const std::string& text) {
  // Slurm 21.08 on: "MPI plugin types are..." then one tab-indented name a line, on standard
  // output; before: "srun: MPI types are..." then "srun: NAME" lines on standard error.
  std::vector<std::string> plugins;
  std::istringstream in(text);
  std::string line;
  bool listing = false;
  while (std::getline(in, line)) {
    std::string_view item = trim_blanks(line);
    if (item.rfind("srun: ", 0) == 0) item = trim_blanks(item.substr(6));
    if (item.find("types are") != std::string_view::npos) {
      listing = true;
    } else if (listing && !item.empty() && item.find_first_of(" :") == std::string_view::npos) {
      plugins.emplace_back(item);
    } else {
      listing = false;
    }
  }
  return plugins;
}

std::vector<std::string> openmpi_pmi_clients(const std::string& text) {
  std::vector<std::string> clients;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("mca:pmix:", 0) != 0) continue;
    const std::string name = line.substr(9, line.find(':', 9) - 9);
    if (!name.empty() && !contains(clients, name)) clients.push_back(name);
  }
  return clients;
}

MpiWireUp choose_wire_up(const std::vector<std::string>& plugins,
                         const std::vector<std::string>& clients, bool clients_known) {
  for (const WireUpRule& rule : kRules) {
    if (contains(plugins, rule.plugin) && (!clients_known || rule.openmpi_has(clients))) {
      return {rule.plugin, {"srun", fmt::format("--mpi={}", rule.plugin)}};
    }
  }
  return {"mpirun", {"mpirun"}};
}

SlurmRanks slurm_ranks(const sysinfo::SlurmJob& job, int requested, int accelerators) {
  const int nodes = std::max(1, job.nodes);
  if (requested > 0) return {requested, 0, "--ranks"};
  if (job.gpus_on_node > 0) {
    return {job.gpus_on_node * nodes, job.gpus_on_node,
            fmt::format("one per GPU Slurm gave the job (SLURM_GPUS_ON_NODE={}) on {} node(s)",
                        job.gpus_on_node, nodes)};
  }
  if (accelerators > 0) {
    return {accelerators * nodes, accelerators,
            fmt::format("one per accelerator of this node ({}) on {} node(s)", accelerators,
                        nodes)};
  }
  if (job.tasks > 0) {
    return {job.tasks, 0, fmt::format("the job's tasks (SLURM_NTASKS={})", job.tasks)};
  }
  const int tasks = job.tasks_per_node.empty() ? nodes : sysinfo::total_tasks(job.tasks_per_node);
  return {tasks, 0,
          fmt::format("the job's tasks (SLURM_TASKS_PER_NODE={})",
                      job.tasks_per_node.empty() ? "unset" : job.tasks_per_node)};
}

std::vector<std::string> slurm_launcher_words(const MpiWireUp& wire_up, const SlurmRanks& r,
                                              bool root) {
  std::vector<std::string> argv = wire_up.command;
  if (wire_up.name == "mpirun") {
    argv.insert(argv.end(), {"-np", std::to_string(r.ranks)});
    if (r.per_node > 0) {
      argv.insert(argv.end(), {"--map-by", fmt::format("ppr:{}:node", r.per_node)});
    }
    if (root) argv.emplace_back("--allow-run-as-root");
    return argv;
  }
  argv.emplace_back("--kill-on-bad-exit=1");  // a rank that dies ends the step, not a hang
  if (r.per_node > 0) {
    argv.push_back(fmt::format("--nodes={}", r.ranks / r.per_node));
    argv.push_back(fmt::format("--ntasks-per-node={}", r.per_node));
  } else {
    argv.push_back(fmt::format("--ntasks={}", r.ranks));
  }
  return argv;
}

SlurmLaunch slurm_launcher(int requested_ranks, int accelerators, bool root) {
  const std::optional<sysinfo::SlurmJob> job = sysinfo::slurm_job();
  if (!job) {
    throw Error(
        "--launcher slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set): run "
        "plumb baseline in an sbatch script or an salloc shell (docs/slurm.md)");
  }
  if (started_by_mpi_launcher()) {
    throw Error(
        fmt::format("--launcher slurm: this is a task of job step {}.{}; plumb baseline "
                    "starts its own steps: run it once in the batch script, or leave out "
                    "--launcher to measure in this step",
                    job->id, job->step));
  }
  if (!supervise::found_in_path("srun")) throw Error("--launcher slurm: srun is not in PATH");
  const std::vector<std::string> plugins =
      srun_mpi_plugins(probe("srun --mpi=list 2>&1", "the MPI plugins of this Slurm"));
  const std::string ompi_info =
      supervise::found_in_path("ompi_info") ? probe("ompi_info --parsable", "OpenMPI's PMI clients")
                                            : "";
  const std::vector<std::string> clients = openmpi_pmi_clients(ompi_info);
  const MpiWireUp wire_up = choose_wire_up(plugins, clients, !clients.empty());
  const SlurmRanks ranks = slurm_ranks(*job, requested_ranks, accelerators);
  const std::string offered = plugins.empty() ? "nothing" : join(plugins, ",");
  return {slurm_launcher_words(wire_up, ranks, root),
          fmt::format("Slurm job {} on {}: {} rank(s), {}; {} (srun --mpi=list: {}; OpenMPI's "
                      "PMI clients: {})",
                      job->id, job->node_list.empty() ? "?" : job->node_list, ranks.ranks,
                      ranks.why, join(wire_up.command, " "), offered,
                      clients.empty() ? "unknown" : join(clients, ","))};
}

}  // namespace plumb::cli
