// plumb comm: the collective benchmark.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/mpi_backend.h"
#include "comm/sweep.h"
#include "report/comm_reporter.h"

namespace plumb::cli {

// As the user typed them; to_sweep_options() checks and converts.
struct CommOptions {
  std::string min_bytes = "8";
  std::string max_bytes = "16M";
  uint64_t step_factor = 4;
  std::string step_bytes;
  int iters = 20;
  int warmup = 5;
  int rounds = 1;
  int timeout_seconds = 300;  // per measurement; the watchdog then names the ranks that stopped; 0: none
  std::string dtype = "float32";
  std::string op = "sum";
  int root = 0;
  int check = 1;
  std::string collectives = "allreduce,allgather,reducescatter,alltoall,broadcast,reduce,sendrecv";
  std::string layers = "world,node,rail,spine";
  std::string cluster;
  std::string backend = "mpi";
  std::string json;
  std::string csv;
  bool quiet = false;
  // The progress line even when standard error is not a terminal: set by plumb baseline in the
  // ranks it launched, whose output mpirun forwards to the terminal plumb baseline writes to.
  bool force_progress = false;
};

void setup_comm(CLI::App& app, CommOptions& options);

// A CLI11 check that the value is a whole number from `min` to `max`; CLI11 puts the option's
// name first: "--rounds: must be a whole number from 1 to 100, got 0".
CLI::Validator whole_number(long long min, long long max);

// What started this process's ranks ("mpirun (Open MPI)", "srun", ...; "none (one process)"),
// from the variables `getenv` returns: plumb.comm/1 "launcher", compared by plumb diff.
std::string launcher_name(const std::function<const char*(const char*)>& getenv);

// Every problem with the options at once, as one plumb::Error.
comm::SweepOptions to_sweep_options(const CommOptions& options);

// MPI with threads for the watchdog (MPI_THREAD_MULTIPLE, which costs a lock in every MPI call),
// or without when --timeout is 0.
comm::MpiSession::Threads threads_for(const comm::SweepOptions& sweep);

// Runs the benchmark on the MPI ranks this process belongs to (a singleton when started alone).
int run_comm(const CommOptions& options);

// The measurement `plumb comm` makes, for commands built on it (plumb baseline). Collective over
// `control`: cluster map, placement, layers and the host-memory check are agreed by every rank
// (an Error is thrown on every rank), `before` runs on rank 0 inside that agreement (to open
// outputs, so a bad path fails before measuring), then the sweep runs with a progress line on
// rank 0 when `progress` is set; a failure while measuring aborts the job. On rank 0, after
// `before`, `streams` (when set) names the reporters that get the context before the first row
// and each size's rows as measured (end() is the caller's). Returns the Result with its context
// (start time, hosts, environment, settings) on rank 0, an empty one elsewhere.
using StreamsFn = std::function<std::vector<report::CommStreamReporter*>()>;
comm::Result measure_comm(const CommOptions& options, const comm::SweepOptions& sweep,
                          comm::MpiCommunicator& control, const std::function<void()>& before,
                          bool progress, const StreamsFn& streams = {});

}  // namespace plumb::cli
