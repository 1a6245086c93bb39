// The context half of `plumb diff`: every difference in topology, versions and settings between
// two records — the variables a change in the results could be attributed to.
#pragma once

#include <vector>

#include "baseline/diff.h"
#include "baseline/store.h"

namespace plumb::baseline {

// Topology: hosts, rank count and every field of the plumb.topo/1 records (more than
// kMaxTopologyFields differing fields are folded into one entry). Versions: plumb.env/1
// "versions". Settings: the environment variables plumb.env/1 captured (NCCL_*, HCCL_*, ...),
// the backend and the sweep settings that change results (iterations, warm-up, dtype, op, check).
std::vector<VariableDiff> context_diffs(const Record& a, const Record& b);

inline constexpr size_t kMaxTopologyFields = 12;

}  // namespace plumb::baseline
