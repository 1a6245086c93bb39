// plumb baseline --launcher slurm: inside an allocation (sbatch script or salloc shell), each
// round's ranks are one srun job step, with the srun --mpi plugin this Slurm and this OpenMPI
// share, one rank per accelerator of each node (else the allocation's tasks). docs/slurm.md.
#pragma once

#include <string>
#include <vector>

#include "sysinfo/slurm_job.h"

namespace plumb::cli {

// How the ranks of a step find each other (a table in slurm_launch.cc, first match wins).
struct MpiWireUp {
  std::string name;                  // "pmix", "pmi2", "mpirun"
  std::vector<std::string> command;  // "srun --mpi=pmix" or "mpirun"
};

// The plugins `srun --mpi=list` prints under "MPI plugin types are..." ("pmix", "pmi2", "none").
std::vector<std::string> srun_mpi_plugins(const std::string& srun_mpi_list);

// OpenMPI's PMI clients from `ompi_info --parsable` lines "mca:pmix:<name>:..." (ext3x, s1,
// s2, ...). Empty when the text lists none.
std::vector<std::string> openmpi_pmi_clients(const std::string& ompi_info_parsable);

// pmix when srun offers it and OpenMPI has a PMIx client (ext*x, pmix*x), pmi2 when srun offers
// it and OpenMPI has s2, else OpenMPI's own mpirun, which reads the allocation and starts its
// daemons with srun. `clients_known` false (no ompi_info): srun's offer alone decides.
MpiWireUp choose_wire_up(const std::vector<std::string>& srun_plugins,
                         const std::vector<std::string>& openmpi_clients, bool clients_known);

// How many ranks, and how they are laid out.
struct SlurmRanks {
  int ranks = 0;
  int per_node = 0;  // > 0: that many on each of the job's nodes; 0: `ranks` as Slurm places them
  std::string why;   // "one per GPU Slurm gave the job (SLURM_GPUS_ON_NODE=8) on 4 node(s)"
};

// --ranks when given; else one per GPU Slurm gave the job on each node, else one per accelerator
// this node shows (NVIDIA GPUs, Ascend NPUs), on every node of the job; else the tasks the job
// asked for (SLURM_NTASKS, else the sum of SLURM_TASKS_PER_NODE).
SlurmRanks slurm_ranks(const sysinfo::SlurmJob& job, int requested, int accelerators);

// The launcher words of one round: srun --mpi=… --kill-on-bad-exit=1 and the layout, or mpirun
// -np … (--map-by ppr:N:node, --allow-run-as-root for root).
std::vector<std::string> slurm_launcher_words(const MpiWireUp& wire_up, const SlurmRanks& ranks,
                                              bool root);

struct SlurmLaunch {
  std::vector<std::string> words;  // the launcher's words, before plumb and its arguments
  std::string note;  // "Slurm job 8 on node[1-2]: 16 rank(s), one per GPU …; srun --mpi=pmix"
};

// This process's allocation, srun's and OpenMPI's answers → the launcher words. One line, exit 2,
// outside an allocation, inside a job step, or when srun is missing or does not answer.
SlurmLaunch slurm_launcher(int requested_ranks, int accelerators, bool root);

}  // namespace plumb::cli
