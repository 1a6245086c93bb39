#include "check/links_measure.h"

#include <cmath>
#include <map>

#include "comm/collective.h"
#include "comm/sweep.h"

namespace plumb::check {
namespace {

// What each rank sends to rank 0 after a round: the pair's busbw and p99 (on the pair's lower
// rank; NaN elsewhere), then each repetition's busbw.
constexpr size_t kSummaryValues = 2;

comm::SweepOptions bench_options(const LinkMeasureOptions& o) {
  comm::SweepOptions s;
  s.min_bytes = o.bytes;
  s.max_bytes = o.bytes;
  s.iters = o.iters;
  s.warmup = o.warmup;
  s.check = true;
  s.collectives = {&comm::sendrecv_collective()};
  s.layers = {"world"};
  return s;
}

// The pair this rank belongs to in `round`, or -1.
int pair_index(const LinkRound& round, int rank) {
  for (size_t i = 0; i < round.pairs.size(); ++i) {
    if (round.pairs[i].a == rank || round.pairs[i].b == rank) return static_cast<int>(i);
  }
  return -1;
}

// The pair's median busbw and p99 over the repetitions, on the pair's lower rank.
std::vector<double> measure_pair(comm::Communicator& pair, const LinkMeasureOptions& o) {
  const comm::SweepOptions s = bench_options(o);
  comm::Bench bench(pair, comm::sendrecv_collective(), s, o.bytes);
  std::vector<double> busbw;
  std::vector<double> p99;
  int64_t wrong = 0;
  for (int i = 0; i < o.repeat; ++i) {
    const comm::Row row = bench.measure(o.bytes);
    busbw.push_back(row.busbw_gbps);
    p99.push_back(row.p99_us);
    wrong += std::max<int64_t>(row.wrong, 0);
  }
  std::vector<double> summary = {median_of(busbw), median_of(p99)};
  // Wrong data is a broken link whatever its speed: the pair counts as moving nothing.
  if (wrong > 0) summary[0] = 0.0;
  summary.insert(summary.end(), busbw.begin(), busbw.end());
  return summary;
}

void collect_round(const std::vector<double>& gathered, const LinkRound& round, int index,
                   const comm::Placement& placement, int repeat, std::vector<PairResult>& out) {
  const size_t stride = kSummaryValues + static_cast<size_t>(repeat);
  for (const RankPair& p : round.pairs) {
    const size_t at = static_cast<size_t>(p.a) * stride;
    PairResult r;
    r.round = index;
    r.ranks = p;
    r.layer = pair_layer(placement, p.a, p.b);
    r.busbw_gbps = gathered[at];
    r.p99_us = gathered[at + 1];
    r.busbw_repeats.assign(gathered.begin() + static_cast<long>(at + kSummaryValues),
                           gathered.begin() + static_cast<long>(at + stride));
    out.push_back(r);
  }
}

}  // namespace

std::vector<PairResult> measure_links(comm::Communicator& world, const comm::Placement& placement,
                                      const std::vector<LinkRound>& rounds,
                                      const LinkMeasureOptions& options,
                                      const RoundProgressFn& progress) {
  std::vector<PairResult> out;
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (world.rank() == 0 && progress) progress(i, rounds.size(), rounds[i].name);
    const int index = pair_index(rounds[i], world.rank());
    std::unique_ptr<comm::Communicator> pair = world.split(index, world.rank());
    std::vector<double> mine(kSummaryValues + static_cast<size_t>(options.repeat), std::nan(""));
    if (pair) mine = measure_pair(*pair, options);
    const std::vector<double> gathered = world.gather(mine, 0);
    if (world.rank() == 0) collect_round(gathered, rounds[i], static_cast<int>(i), placement, options.repeat, out);
  }
  return out;
}

std::string pair_layer(const comm::Placement& placement, int a, int b) {
  const comm::RankPlace& x = placement.ranks[static_cast<size_t>(a)];
  const comm::RankPlace& y = placement.ranks[static_cast<size_t>(b)];
  if (x.node == y.node) return "node";
  const int rack_x = placement.nodes[static_cast<size_t>(x.node)].rack;
  const int rack_y = placement.nodes[static_cast<size_t>(y.node)].rack;
  return rack_x == rack_y ? "rail" : "spine";
}

int uniform_ranks_per_node(const comm::Placement& placement) {
  std::map<int, int> counts;
  for (const comm::RankPlace& r : placement.ranks) ++counts[r.node];
  if (counts.size() < 2) return 1;
  const int first = counts.begin()->second;
  for (const auto& [node, count] : counts) {
    if (count != first) return 1;
  }
  return first;
}

}  // namespace plumb::check
