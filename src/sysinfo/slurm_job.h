// The Slurm job a process runs in, read from the variables slurmd sets in every job's environment
// (sbatch(1) and srun(1), "OUTPUT ENVIRONMENT VARIABLES"): kept with a measurement so that its
// record names the job, its node list and the step's tasks, and used by `plumb baseline
// --launcher slurm` to start one rank per accelerator (or per task) of the allocation.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

namespace plumb::sysinfo {

struct SlurmJob {
  std::string id;              // SLURM_JOB_ID
  std::string name;            // SLURM_JOB_NAME
  std::string cluster;         // SLURM_CLUSTER_NAME
  std::string partition;       // SLURM_JOB_PARTITION
  std::string node_list;       // SLURM_JOB_NODELIST, a hostlist expression ("node[01-04]")
  int nodes = 0;               // SLURM_JOB_NUM_NODES (SLURM_NNODES)
  int tasks = 0;               // SLURM_NTASKS; 0 when the job asked for no task count
  std::string tasks_per_node;  // SLURM_TASKS_PER_NODE, "2(x3),1": how Slurm laid the tasks out
  int gpus_on_node = 0;        // SLURM_GPUS_ON_NODE: GPUs Slurm gave the job on this node
  std::string step;            // SLURM_STEP_ID; empty in the batch script or salloc's shell
  std::string step_node_list;  // SLURM_STEP_NODELIST
  int step_tasks = 0;          // SLURM_STEP_NUM_TASKS
  std::string mpi;             // SLURM_MPI_TYPE: the step's srun --mpi plugin ("pmix")
};

// Looks a variable up; nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

// The job this process runs in (nothing when SLURM_JOB_ID is unset). A count that is not a whole
// number is an Error naming the variable: "SLURM_JOB_NUM_NODES='four': expected a whole number".
std::optional<SlurmJob> slurm_job(const EnvLookup& lookup);
std::optional<SlurmJob> slurm_job();  // from this process's environment

// The tasks of a SLURM_TASKS_PER_NODE value: "2(x3),1" is 2 tasks on each of 3 nodes and 1 on
// the next, 7 in all (sbatch(1)). Error naming the value otherwise.
int total_tasks(const std::string& tasks_per_node);

// {"scheduler": "slurm", "job_id", "job_name", "cluster", "partition", "node_list", "nodes",
// "tasks", "tasks_per_node", "gpus_on_node", "step", "step_node_list", "step_tasks", "mpi"}:
// texts that Slurm did not set are null, counts it did not set 0.
nlohmann::json slurm_job_json(const SlurmJob& job);

}  // namespace plumb::sysinfo
