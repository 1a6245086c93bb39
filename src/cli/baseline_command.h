// plumb baseline: the main job. Started alone it launches its own MPI ranks (or the --launcher's);
// every rank then takes the topology, rank 0 the versions and settings, all of them a comm sweep
// in rounds; rank 0 stores one record, writes the HTML report and prints where everything went.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

#include "baseline/store.h"
#include "cli/run_command.h"
#include "cli/serve_run.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

// --launcher slurm: srun with the allocation's layout and MPI plugin (cli/slurm_launch.h).
inline constexpr const char* kSlurmLauncher = "slurm";

struct BaselineOptions {
  int ranks = 0;              // 0 (left out): one per accelerator, else one per core (2 to 8)
  std::string launcher;       // "srun -N 4 --ntasks-per-node 8", ..., "slurm"; empty: mpirun
  std::string hostfile;       // mpirun --hostfile
  std::string label;
  bool quick = false;
  std::string collectives = "allreduce,allgather,reducescatter,alltoall";
  std::string sizes;          // MIN:MAX[:FACTOR]; empty: 1K:16M:4 (1K:1M:4 with --quick)
  int rounds = 3;
  int iters = 20;
  int timeout_seconds = 300;  // per measurement, passed to the ranks' watchdog; 0: none
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
  // --workload -- COMMAND: the whole baseline set (cli/baseline_workload.h)
  bool workload = false;
  RunOptions job;             // COMMAND and the supervision options (plumb run's)
  int steps = 20;             // --steps: the model run's length (PLUMB_MAX_STEPS)
  std::string profile_steps = "3:3";   // START:COUNT (PLUMB_PROFILE_STEPS): early, see docs
  std::string plan;           // plumb plan --json output for the model part
  std::string traces;         // the job's own trace folder instead of PLUMB_TRACE_DIR
  std::string skip;           // comm,model,memory,recovery,serve
  // --serve-url ...: the serving part, a plumb serve bench sweep (cli/serve_run.h); its URL,
  // API, model, --serve-concurrency sweep, --serve-requests per point and --serve-slo.
  ServeBenchOptions serve;
};

void setup_baseline(CLI::App& app, BaselineOptions& options);
int run_baseline(const BaselineOptions& options);

// Started alone: the comm sweep in rounds, each a fresh MPI job, combined into one record holding
// topology, versions and comm (not stored). Errors as plumb baseline reports them.
baseline::Record measure_rounds(const BaselineOptions& options);

// The HTML report of `record` in --output-dir; returns its path.
std::string write_baseline_report(const BaselineOptions& options, const baseline::Record& record);

// The command line that starts the ranks: `launcher` words (or mpirun with -np, --hostfile,
// --oversubscribe when ranks > cores, --allow-run-as-root for root), then `self` baseline
// --worker and the options that reach the ranks.
std::vector<std::string> launch_command(const BaselineOptions& options, const std::string& self,
                                        int ranks, int cores, bool root);

// Started alone: the command that starts one round's ranks (launch_command() for this host: the
// rank count, this executable, root or not). Error when mpirun is needed and missing.
std::vector<std::string> ranks_command(const BaselineOptions& options);

// The words of a command line as a POSIX shell splits them: blanks separate words; single quotes
// keep everything; double quotes keep all but \" \\ \$ \`; a backslash outside quotes keeps the
// next character. Nothing is expanded. Throws plumb::Error naming `option` for an unclosed quote
// or a trailing backslash.
std::vector<std::string> split_words(const std::string& text, const std::string& option);

struct ChildExit {
  int code = -1;     // its exit status, or -1 when a signal ended it
  int signal = 0;    // the signal that ended it
  int received = 0;  // SIGINT, SIGTERM or SIGHUP that plumb received (and forwarded) meanwhile
};

// While alive, SIGINT, SIGTERM, SIGHUP and SIGCHLD are blocked: they wait instead of ending plumb
// before it cleaned up (run_in_own_group() takes them meanwhile). Destroyed, it restores the mask,
// and a signal still pending then ends plumb as it would have.
class HeldSignals {
 public:
  HeldSignals();
  ~HeldSignals();
  HeldSignals(const HeldSignals&) = delete;
  HeldSignals& operator=(const HeldSignals&) = delete;
  const sigset_t& set() const { return set_; }

 private:
  sigset_t set_;
  sigset_t previous_;
};

// Runs argv with this process's standard streams in a process group of its own, which dies with
// plumb (PR_SET_PDEATHSIG). SIGINT, SIGTERM and SIGHUP that plumb receives meanwhile go to the
// whole group as SIGTERM, then SIGKILL 5 s later if it has not exited (at once at a second
// signal).
ChildExit run_in_own_group(const std::vector<std::string>& argv);

// One rank per NVIDIA GPU or Ascend NPU this host shows, else one per core, at least 2 and at
// most 8 (a baseline of one host; more ranks than cores only oversubscribe it).
int default_ranks(int accelerators, int cores);

}  // namespace plumb::cli
