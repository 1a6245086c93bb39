// Across ranks: each collective instance matched on the ranks of its group, how long each rank
// waited in it for the last one to arrive, and so the straggler (docs/step.md, "Across ranks").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "step/result.h"
#include "step/trace.h"

namespace plumb::step {

// Matches the calls of `traces` (sorted by rank, steps already checked to agree). A call takes
// part when it starts inside its rank's step range. Calls of one group (its own ranks when the
// trace names it, else every rank of the set) meet by their sequence number where every
// collective of the group carries one, else the n-th call of a kind on one rank meets the n-th of
// that kind on the others; an instance that does not line up in time is left out and matching
// goes on (alignment.h). `exposed_ns[r][c]` is call c of traces[r] not overlapped by
// computation. `summary` counts the instances; notes explain what did not line up.
std::vector<CollectiveInstance> match_collectives(const std::vector<RankTrace>& traces,
                                                  const std::vector<std::vector<int64_t>>& exposed_ns,
                                                  int world_size, MatchSummary& summary,
                                                  std::vector<std::string>& notes);

// Per step, the ranks the others waited for (the time summed over the step's instances), biggest
// first, at most kStragglersPerStep; then the whole trace as step −1, at most kStragglersOverall.
inline constexpr size_t kStragglersPerStep = 3;
inline constexpr size_t kStragglersOverall = 5;
std::vector<Straggler> find_stragglers(const std::vector<CollectiveInstance>& instances);

// busbw in GB/s of `bytes` moved in `duration_us` by a collective of `kind` over `nranks`, with
// `plumb comm`'s bus factors (nccl-tests doc/PERFORMANCE.md); NaN when bytes or time is 0 or the
// kind has no factor (barrier, unknown).
double instance_busbw_gbps(CollectiveKind kind, uint64_t bytes, double duration_us, int nranks);

}  // namespace plumb::step
