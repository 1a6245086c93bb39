#include "sysinfo/slurm_job.h"

#include <fmt/format.h>

#include <cstdlib>
#include <array>
#include <limits>
#include <string_view>

#include "common/error.h"
#include "common/regex.h"
#include "common/strings.h"

namespace plumb::sysinfo {
namespace {

// The first of `names` that is set, else "".
std::string text(const EnvLookup& lookup, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (const char* value = lookup(name)) return value;
  }
  return "";
}

int whole(const std::string& value, const std::string& what) {
  size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || used == 0 || n < 0 || n > std::numeric_limits<int>::max()) {
    throw Error(fmt::format("{}='{}': expected a whole number", what, value));
  }
  return static_cast<int>(n);
}

// The first of `names` that is set, as a count; 0 when none is.
int count(const EnvLookup& lookup, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (const char* value = lookup(name)) return whole(value, name);
  }
  return 0;
}

nlohmann::json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

}  // namespace

int total_tasks(const std::string& tasks_per_node) {
  // One entry per run of nodes: COUNT, or COUNT(xNODES).
  static const Regex entry(R"(([0-9]+)(?:\(x([0-9]+)\))?)");
  long long total = 0;
  for (const std::string& part : split_list(tasks_per_node, ',')) {
    std::array<std::string_view, 3> m;  // the entry, COUNT, NODES
    if (!entry.match(part, m)) {
      throw Error(fmt::format("SLURM_TASKS_PER_NODE='{}': '{}' is not COUNT or COUNT(xNODES)",
                              tasks_per_node, part));
    }
    const int nodes = m[2].data() != nullptr ? whole(std::string(m[2]), "SLURM_TASKS_PER_NODE") : 1;
    total += static_cast<long long>(whole(std::string(m[1]), "SLURM_TASKS_PER_NODE")) * nodes;
    if (total > std::numeric_limits<int>::max()) {
      throw Error(fmt::format("SLURM_TASKS_PER_NODE='{}': too many tasks", tasks_per_node));
    }
  }
  if (tasks_per_node.empty()) throw Error("SLURM_TASKS_PER_NODE is empty");
  return static_cast<int>(total);
}

std::optional<SlurmJob> slurm_job(const EnvLookup& lookup) {
  SlurmJob job;
  job.id = text(lookup, {"SLURM_JOB_ID", "SLURM_JOBID"});
  if (job.id.empty()) return std::nullopt;
  job.name = text(lookup, {"SLURM_JOB_NAME"});
  job.cluster = text(lookup, {"SLURM_CLUSTER_NAME"});
  job.partition = text(lookup, {"SLURM_JOB_PARTITION"});
  job.node_list = text(lookup, {"SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  job.nodes = count(lookup, {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"});
  job.tasks = count(lookup, {"SLURM_NTASKS", "SLURM_NPROCS"});
  job.tasks_per_node = text(lookup, {"SLURM_TASKS_PER_NODE"});
  if (!job.tasks_per_node.empty()) total_tasks(job.tasks_per_node);  // well formed?
  job.gpus_on_node = count(lookup, {"SLURM_GPUS_ON_NODE"});
  job.step = text(lookup, {"SLURM_STEP_ID", "SLURM_STEPID"});
  job.step_node_list = text(lookup, {"SLURM_STEP_NODELIST"});
  job.step_tasks = count(lookup, {"SLURM_STEP_NUM_TASKS"});
  job.mpi = text(lookup, {"SLURM_MPI_TYPE"});
  return job;
}

std::optional<SlurmJob> slurm_job() {
  return slurm_job([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

nlohmann::json slurm_job_json(const SlurmJob& j) {
  return {{"scheduler", "slurm"},
          {"job_id", j.id},
          {"job_name", text_or_null(j.name)},
          {"cluster", text_or_null(j.cluster)},
          {"partition", text_or_null(j.partition)},
          {"node_list", text_or_null(j.node_list)},
          {"nodes", j.nodes},
          {"tasks", j.tasks},
          {"tasks_per_node", text_or_null(j.tasks_per_node)},
          {"gpus_on_node", j.gpus_on_node},
          {"step", text_or_null(j.step)},
          {"step_node_list", text_or_null(j.step_node_list)},
          {"step_tasks", j.step_tasks},
          {"mpi", text_or_null(j.mpi)}};
}

}  // namespace plumb::sysinfo
