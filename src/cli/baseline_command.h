// plumb baseline: the main job. Started alone it launches its own MPI ranks (or the --launcher's);
// every rank then takes the topology, rank 0 the versions and settings, all of them a comm sweep
// in rounds; rank 0 stores one record, writes the HTML report and prints where everything went.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace plumb::cli {

struct BaselineOptions {
  int ranks = 0;              // 0: one per accelerator, else one per core (2 to 8)
  std::string launcher;       // "srun -N 4 --ntasks-per-node 8", ...; empty: mpirun
  std::string hostfile;       // mpirun --hostfile
  std::string label;
  bool quick = false;
  std::string collectives = "allreduce,allgather,reducescatter,alltoall";
  std::string sizes;          // MIN:MAX[:FACTOR]; empty: 1K:16M:4 (1K:1M:4 with --quick)
  int rounds = 0;             // 0: 3
  int iters = 20;
  std::string cluster;
  std::string backend = "auto";
  std::string db;
  std::string output_dir = ".";
  std::string compare;        // a baseline to diff against and overlay in the report
  double threshold_percent = 10;
  bool quiet = false;
  bool worker = false;        // set in the ranks plumb baseline launched itself
  std::string round_output;   // worker: write this round's record here instead of storing it
  bool progress = false;      // worker: draw the progress line (the launching plumb's terminal)
};

void setup_baseline(CLI::App& app, BaselineOptions& options);
int run_baseline(const BaselineOptions& options);

// The command line that starts the ranks: `launcher` words (or mpirun with -np, --hostfile,
// --oversubscribe when ranks > cores, --allow-run-as-root for root), then `self` baseline
// --worker and the options that reach the ranks.
std::vector<std::string> launch_command(const BaselineOptions& options, const std::string& self,
                                        int ranks, int cores, bool root);

// Started alone: the command that starts one round's ranks (launch_command() for this host: the
// rank count, this executable, root or not). Error when mpirun is needed and missing.
std::vector<std::string> ranks_command(const BaselineOptions& options);

// Runs argv with this process's standard streams; returns its exit code.
int run_inheriting(const std::vector<std::string>& argv);

// One rank per NVIDIA GPU or Ascend NPU this host shows, else one per core, at least 2 and at
// most 8 (a baseline of one host; more ranks than cores only oversubscribe it).
int default_ranks(int accelerators, int cores);

}  // namespace plumb::cli
