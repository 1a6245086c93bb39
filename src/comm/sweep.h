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
  bool check = true;
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  std::vector<const Collective*> collectives;
  std::vector<std::string> layers = {"world", "node", "rail", "spine"};
};

// Throws plumb::Error for settings that cannot run: min > max, a step that does not grow,
// non-positive iteration counts, no collective.
void validate(const SweepOptions& options);

// The requested sizes: min, min·f, min·f², ... ≤ max (or min, min+i, ... with step_bytes).
std::vector<uint64_t> sweep_sizes(const SweepOptions& options);

// Called on world rank 0 before each measurement: (done, total, "layer · collective · size").
using ProgressFn = std::function<void(size_t, size_t, const std::string&)>;

// Runs the sweep. Collective over `world`: every rank calls it with the same arguments. Returns
// the full Result (rows, layers, notes) on world rank 0; the other ranks get only their layers.
Result run_sweep(Communicator& world, const Placement& placement, const SweepOptions& options,
                 const ProgressFn& progress = {});

// One group's measurement of one size, as every rank of `group` takes it (exposed for the
// benchmark and the tests). Returns the row on group rank 0; other ranks get a row with only
// `wrong` of their own.
Row measure(Communicator& group, const Collective& collective, uint64_t bytes,
            const SweepOptions& options);

}  // namespace plumb::comm
