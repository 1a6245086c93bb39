// plumb check links: measuring a schedule's rounds. Every rank of `world` calls it; the pairs of
// a round run at once, each on a two-rank communicator split from `world`, with plumb comm's own
// sendrecv benchmark (comm::Bench): both partners send and receive `bytes` at once, `iters`
// times back to back (busbw, as nccl-tests times it) and `iters` times one by one (p99). Only a
// pair's summary (busbw, p99) travels to rank 0: one gather of three numbers per rank per round.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "check/links_analysis.h"
#include "check/links_schedule.h"
#include "comm/communicator.h"
#include "comm/placement.h"

namespace plumb::check {

struct LinkMeasureOptions {
  uint64_t bytes = 1 << 20;  // per direction per operation
  int iters = 20;
  int warmup = 3;
  int repeat = 3;  // measurements per pair per round; the pair keeps their median
};

// Called on rank 0 before each round: (round index, rounds, name).
using RoundProgressFn = std::function<void(size_t, size_t, const std::string&)>;

// The pairs' results on rank 0 (layer from pair_layer, ratio and slow not yet filled); empty on
// the other ranks.
std::vector<PairResult> measure_links(comm::Communicator& world, const comm::Placement& placement,
                                      const std::vector<LinkRound>& rounds,
                                      const LinkMeasureOptions& options,
                                      const RoundProgressFn& progress = {});

// Where the data between two ranks travels: "node" (the same node: NVLink, HCCS, shared memory),
// "rail" (two nodes of one rack: the leaf switch) or "spine" (two racks).
std::string pair_layer(const comm::Placement& placement, int a, int b);

// The ranks per node when every node has the same number (the stride of the rail-aligned
// shifts), else 1.
int uniform_ranks_per_node(const comm::Placement& placement);

}  // namespace plumb::check
