// The sweep runner: for each topology layer, each collective and each size, runs the measurement
// on every group of the layer at once and collects one row per group. Knows no output format.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/collective.h"
#include "comm/communicator.h"
#include "comm/placement.h"
#include "comm/result.h"

namespace plumb::comm {

struct SweepOptions {
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 16 * 1024 * 1024;
  uint64_t step_factor = 4;  // multiply by this ...
  uint64_t step_bytes = 0;   // ... or, when non-zero, add this (nccl-tests -i)
  int iters = 20;
  int warmup = 5;
  int rounds = 1;  // the whole sweep this many times, fresh buffers each; rows keep the median
  int timeout_seconds = 300;  // one measurement (one size of one collective) at most; 0: no Watchdog
  bool check = true;
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  std::vector<const Collective*> collectives;
  std::vector<std::string> layers = {"world", "node", "rail", "spine"};
};

// The most iterations per size: the per-iteration pass keeps one time per iteration and rank.
inline constexpr int kMaxIters = 1000000;
inline constexpr int kMaxRounds = 100;
inline constexpr int kMaxTimeoutSeconds = 86400;

// Throws plumb::Error listing every setting that cannot run: min > max, a step that does not
// grow, iteration counts out of range, no or repeated collectives or layers.
void validate(const SweepOptions& options);

// The requested sizes: min, min·f, min·f², ... ≤ max (or min, min+i, ... with step_bytes).
std::vector<uint64_t> sweep_sizes(const SweepOptions& options);

// Called on world rank 0 before each measurement: (done, total, "layer · collective · size").
using ProgressFn = std::function<void(size_t, size_t, const std::string&)>;

// Called on world rank 0 with the rows of one size, every group's (in group order), as soon as
// they are measured, and the round they belong to (from 1): what lets plumb comm print and write
// each row at once instead of at the end of the sweep.
using RowsFn = std::function<void(const std::vector<Row>&, int round)>;

// Told, on every rank, which step of the sweep the rank begins ("world · allreduce · 1 KiB", the
// splits, the buffers, the final gather) and when the sweep is over: what a watchdog needs to
// name the ranks that stopped arriving (comm::Watchdog in agreement.h).
class StepWatch {
 public:
  virtual ~StepWatch() = default;
  virtual void begin(const std::string& what) = 0;
  virtual void end() = 0;
};

// The layers to run and the checks that depend on them (the root must be a rank of every group).
// Pure: every rank computes the same layers or throws the same Error.
std::vector<Layer> plan_layers(const Placement& placement, const SweepOptions& options);

// Host memory one rank needs at most (send and receive buffers, and their host copies for the
// inputs and the check) for the largest size, over the collectives and group sizes of `layers`.
uint64_t host_bytes_per_rank(const SweepOptions& options, const std::vector<Layer>& layers);

// Throws plumb::Error when `ranks_here` ranks on one host would need more than `host_memory`.
void check_host_memory(const SweepOptions& options, const std::vector<Layer>& layers,
                       int ranks_here, uint64_t host_memory);

// Runs the sweep over `layers` (from plan_layers). Collective over `world`: every rank calls it
// with the same arguments. After each size the groups' rows are gathered on world rank 0 and
// handed to `rows` there. Returns the full Result (rows, layers, notes) on world rank 0; the
// other ranks get the layers only.
Result run_sweep(Communicator& world, const Placement& placement, std::vector<Layer> layers,
                 const SweepOptions& options, const ProgressFn& progress = {},
                 StepWatch* watch = nullptr, const RowsFn& rows = {});

// What one group needs to measure one collective: buffers sized for the largest size, inputs
// written once (input element i is pattern.value(rank, i) whatever the size).
class Bench {
 public:
  Bench(Communicator& group, const Collective& collective, const SweepOptions& options,
        uint64_t largest);

  // One size, as every rank of the group takes it: warm-up, timed loop, per-iteration pass,
  // check. The full row on group rank 0; the other ranks get the size columns only.
  Row measure(uint64_t bytes);

  // The buffers the operations run on (for bench/comm_overhead's reference loop).
  Buffer& send_buffer() { return *send_; }
  Buffer& recv_buffer() { return *recv_; }

 private:
  void run_once(const Counts& counts);
  int64_t count_wrong(const Counts& counts) const;
  Row make_row(uint64_t bytes, const Counts& counts, const std::vector<double>& gathered) const;

  Communicator& group_;
  const Collective& collective_;
  const SweepOptions& options_;  // must outlive the Bench
  CollArgs args_;
  size_t element_size_;
  Pattern pattern_;
  std::unique_ptr<Buffer> send_;
  std::unique_ptr<Buffer> recv_;
  bool recv_has_input_ = false;
};

// One group's measurement of one size with a Bench of its own (for the tests). Returns the full row on group rank 0; the other ranks get the row's
// size columns only.
Row measure(Communicator& group, const Collective& collective, uint64_t bytes,
            const SweepOptions& options);

}  // namespace plumb::comm
