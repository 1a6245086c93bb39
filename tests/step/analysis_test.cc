// The step analysis on synthetic traces whose overlap, idle time and straggler are known by
// construction (docs/step.md has the same worked example).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>

#include "common/error.h"
#include "step/analysis.h"
#include "step/baseline_match.h"
#include "step/breakdown.h"
#include "step/collectives.h"
#include "step/intervals.h"
#include "step/plan_compare.h"
#include "support/subprocess.h"

namespace plumb::step {
namespace {

constexpr int64_t kUs = 1000;  // ns per µs

DeviceSpan span(int64_t start_us, int64_t end_us, Activity activity, uint32_t stream,
                int32_t call = -1) {
  return {start_us * kUs, end_us * kUs, stream, activity, call};
}

RankTrace rank_trace(int rank, int world, std::vector<StepSpan> steps) {
  RankTrace t;
  t.source = "rank-" + std::to_string(rank) + ".json";
  t.format = "kineto";
  t.rank = rank;
  t.world_size = world;
  t.steps = std::move(steps);
  return t;
}

StepSpan step_us(int64_t step, int64_t start_us, int64_t end_us) {
  return {step, start_us * kUs, end_us * kUs};
}

// Adds one collective call with one kernel on stream 20.
void add_call(RankTrace& t, CollectiveKind kind, int64_t start_us, int64_t end_us,
              uint64_t bytes, std::string group, std::vector<int> ranks) {
  CollectiveCall call;
  call.kind = kind;
  call.start_ns = start_us * kUs;
  call.end_ns = end_us * kUs;
  call.bytes = bytes;
  call.group = std::move(group);
  call.group_ranks = std::move(ranks);
  call.name = "ncclDevKernel_Generic";
  t.calls.push_back(call);
  t.spans.push_back(span(start_us, end_us, Activity::kCommunication, 20,
                         static_cast<int32_t>(t.calls.size() - 1)));
}

TEST(StepIntervals, UnionIntersectionDifference) {
  IntervalSet a = unite(std::vector<Interval>{{50, 60}, {0, 10}, {5, 20}, {30, 30}});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].start, 0);
  EXPECT_EQ(a[0].end, 20);
  IntervalSet b = unite(std::vector<Interval>{{15, 55}});
  EXPECT_EQ(length(intersect(a, b)), 5 + 5);
  IntervalSet d = subtract(a, b);  // [0,15) and [55,60)
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].end, 15);
  EXPECT_EQ(d[1].start, 55);
  EXPECT_EQ(length(unite(a, b)), 60);
  EXPECT_EQ(length(clip(a, 8, 52)), 12 + 2);
  EXPECT_EQ(overlap_length(a, 8, 52), 14);
}

// Step [0, 200) µs: compute on two streams [0,100) and [80,120); communication [50,150);
// memcpy [140,170). Compute = 120, communication = 100, overlapped = [50,120) = 70,
// exposed = 30, memory outside both = [150,170) = 20, idle = 200 − 170 = 30.
TEST(StepBreakdown, OverlapAcrossStreams) {
  RankTrace t = rank_trace(0, 1, {step_us(7, 0, 200)});
  t.spans = {span(0, 100, Activity::kCompute, 7), span(80, 120, Activity::kCompute, 8),
             span(50, 150, Activity::kCommunication, 20), span(140, 170, Activity::kMemory, 9)};
  std::vector<StepBreakdown> steps = break_down(t, activity_sets(t));
  ASSERT_EQ(steps.size(), 1u);
  const StepBreakdown& s = steps[0];
  EXPECT_EQ(s.step, 7);
  EXPECT_DOUBLE_EQ(s.step_time_us, 200);
  EXPECT_DOUBLE_EQ(s.compute_us, 120);
  EXPECT_DOUBLE_EQ(s.communication_us, 100);
  EXPECT_DOUBLE_EQ(s.overlapped_us, 70);
  EXPECT_DOUBLE_EQ(s.exposed_communication_us, 30);
  EXPECT_DOUBLE_EQ(s.memory_us, 20);
  EXPECT_DOUBLE_EQ(s.idle_us, 30);
  EXPECT_DOUBLE_EQ(s.preparing_us, 0);  // computation starts with the step
  EXPECT_DOUBLE_EQ(s.compute_us + s.exposed_communication_us + s.memory_us + s.idle_us,
                   s.step_time_us);
}

// A collective [180, 260) crosses the boundary of steps [0,200) and [200,400): 20 µs count in
// the first step, 60 in the second; the instance belongs to the step it starts in.
TEST(StepBreakdown, CollectiveSpanningAStepBoundaryIsSplit) {
  RankTrace t = rank_trace(0, 1, {step_us(1, 0, 200), step_us(2, 200, 400)});
  add_call(t, CollectiveKind::kAllReduce, 180, 260, 1 << 20, "0", {0});
  std::vector<StepBreakdown> steps = break_down(t, activity_sets(t));
  EXPECT_DOUBLE_EQ(steps[0].communication_us, 20);
  EXPECT_DOUBLE_EQ(steps[1].communication_us, 60);
  EXPECT_DOUBLE_EQ(steps[0].idle_us, 180);
  EXPECT_DOUBLE_EQ(steps[0].preparing_us, 180);  // to the first communication: no computation
  StepResult result = analyze({t}, {});
  ASSERT_EQ(result.collectives.size(), 1u);
  EXPECT_EQ(result.collectives[0].step, 1);
}

// Three ranks of one allreduce group: rank 2 arrives 300 µs after rank 0, 270 after rank 1. The
// others wait 300 + 270 = 570 µs for it; the data moves in rank 2's 1,000 µs.
TEST(StepCollectives, StragglerIsTheLastToArrive) {
  std::vector<RankTrace> traces;
  const int64_t starts[] = {100, 130, 400};
  for (int r = 0; r < 3; ++r) {
    RankTrace t = rank_trace(r, 3, {step_us(5, 0, 2000)});
    add_call(t, CollectiveKind::kAllReduce, starts[r], 1400, 1'000'000'000, "0", {0, 1, 2});
    traces.push_back(t);
  }
  StepResult result = analyze(traces, {});
  ASSERT_EQ(result.collectives.size(), 1u);
  const CollectiveInstance& c = result.collectives[0];
  EXPECT_EQ(c.kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(c.first_rank, 0);
  EXPECT_EQ(c.last_rank, 2);
  EXPECT_EQ(c.ranks_seen, 3);
  EXPECT_DOUBLE_EQ(c.start_skew_us, 300);
  EXPECT_DOUBLE_EQ(c.waited_us, 570);
  EXPECT_DOUBLE_EQ(c.duration_us, 1000);
  // algbw = 1e9 B / 1 ms = 1,000 GB/s; allreduce busbw factor 2(n−1)/n = 4/3.
  EXPECT_NEAR(c.busbw_gbps, 1000.0 * 4 / 3, 1e-9);
  ASSERT_EQ(result.stragglers.size(), 2u);
  EXPECT_EQ(result.stragglers[0].step, 5);
  EXPECT_EQ(result.stragglers[0].rank, 2);
  EXPECT_DOUBLE_EQ(result.stragglers[0].waited_on_us, 570);
  EXPECT_EQ(result.stragglers[1].step, -1);
  EXPECT_EQ(result.stragglers[1].rank, 2);
}

// Calls are matched per group in order: group "tp" [0,1] and group "dp" [0,2] each meet only
// their own ranks, even when issued in a different order on each rank.
TEST(StepCollectives, MatchedPerGroupInCallOrder) {
  RankTrace r0 = rank_trace(0, 3, {step_us(1, 0, 1000)});
  add_call(r0, CollectiveKind::kAllGather, 10, 60, 4096, "tp", {0, 1});
  add_call(r0, CollectiveKind::kReduceScatter, 30, 40, 4096, "dp", {0, 2});
  RankTrace r1 = rank_trace(1, 3, {step_us(1, 0, 1000)});
  add_call(r1, CollectiveKind::kAllGather, 50, 60, 4096, "tp", {0, 1});
  RankTrace r2 = rank_trace(2, 3, {step_us(1, 0, 1000)});
  add_call(r2, CollectiveKind::kReduceScatter, 5, 40, 4096, "dp", {0, 2});
  StepResult result = analyze({r2, r0, r1}, {});
  ASSERT_EQ(result.collectives.size(), 2u);
  for (const CollectiveInstance& c : result.collectives) {
    if (c.group == "tp") {
      EXPECT_EQ(c.last_rank, 1);
      EXPECT_DOUBLE_EQ(c.start_skew_us, 40);
    } else {
      EXPECT_EQ(c.group, "dp");
      EXPECT_EQ(c.last_rank, 0);
      EXPECT_DOUBLE_EQ(c.start_skew_us, 25);
    }
  }
  EXPECT_EQ(result.ranks[0].rank, 0);  // sorted by rank
}

// Rank 0's profile window opened earlier: its first allreduce [10, 20) ended before rank 1's
// first one [105, 120) started, so rank 1 never recorded it: it is an instance of rank 0 alone,
// and the next ones meet.
TEST(StepCollectives, LeadingCallsOfAnEarlierWindowAreMatchedAmongTheirRanks) {
  RankTrace r0 = rank_trace(0, 2, {step_us(1, 0, 1000)});
  add_call(r0, CollectiveKind::kAllReduce, 10, 20, 8, "0", {0, 1});
  add_call(r0, CollectiveKind::kAllReduce, 100, 120, 8, "0", {0, 1});
  RankTrace r1 = rank_trace(1, 2, {step_us(1, 0, 1000)});
  add_call(r1, CollectiveKind::kAllReduce, 105, 120, 8, "0", {0, 1});
  StepResult result = analyze({r0, r1}, {});
  ASSERT_EQ(result.collectives.size(), 2u);  // rank 0's first call alone, then both
  EXPECT_EQ(result.collectives[0].ranks_seen, 1);
  EXPECT_EQ(result.collectives[1].ranks_seen, 2);
  EXPECT_DOUBLE_EQ(result.collectives[1].start_skew_us, 5);
  EXPECT_EQ(result.matching.matched, 1);
  EXPECT_EQ(result.matching.partial, 1);
  EXPECT_EQ(result.notes.back(),
            "group 0: 1 leading allreduce call(s) end before another rank's first one starts "
            "(profile windows opened at different times): matched only among the ranks that "
            "recorded them");
}

// Kinds are matched apart (an allgather between two allreduces on one rank only does not shift
// them); an instance whose calls cannot be one (no overlap in time) is left out with a note, and
// matching goes on.
TEST(StepCollectives, CallsThatDoNotOverlapAreLeftOutWithANote) {
  RankTrace r0 = rank_trace(0, 2, {step_us(1, 0, 1000)});
  add_call(r0, CollectiveKind::kAllReduce, 10, 20, 8, "0", {0, 1});
  add_call(r0, CollectiveKind::kAllGather, 22, 25, 8, "0", {0, 1});
  add_call(r0, CollectiveKind::kAllReduce, 30, 40, 8, "0", {0, 1});
  RankTrace r1 = rank_trace(1, 2, {step_us(1, 0, 1000)});
  add_call(r1, CollectiveKind::kAllReduce, 12, 20, 8, "0", {0, 1});
  add_call(r1, CollectiveKind::kAllReduce, 50, 60, 8, "0", {0, 1});
  StepResult result = analyze({r0, r1}, {});
  ASSERT_EQ(result.collectives.size(), 2u);  // the first allreduce, and rank 0's allgather alone
  EXPECT_EQ(result.notes.back(),
            "group 0: allreduce: instance 2 (step 1) does not line up across the ranks (rank 1 "
            "outside the others' time): left out of skew and stragglers; matching goes on");
  EXPECT_EQ(result.matching.instances, 3);
  EXPECT_EQ(result.matching.matched, 1);
  EXPECT_EQ(result.matching.partial, 1);
  EXPECT_EQ(result.matching.unaligned, 1);
}

// ---- An 8-rank set: 12 steps of 10 ms, 8 allreduces of group "0" per step ----------------------
//
// Instance k's calls start 5 µs apart (rank r at base + 5r µs) and all end at base + 400 µs, so
// each instance has skew 35 µs, last rank 7, and the others wait Σ_r (35 − 5r) = 140 µs for
// it.
// `tweak` may move or drop one rank's call (returns false to drop it).
constexpr int kSetRanks = 8;
constexpr int kSetSteps = 12;
constexpr int kPerStep = 8;
constexpr int kInstances = kSetSteps * kPerStep;
constexpr double kWaitedPerInstance = 140;

struct Call {
  int64_t start_us;
  int64_t end_us;
  int64_t seq;
};
using Tweak = std::function<bool(int rank, int k, Call& call)>;

int64_t base_us(int k) { return (k / kPerStep) * 10000 + 1000 + (k % kPerStep) * 1000; }

std::vector<RankTrace> eight_ranks(const Tweak& tweak, bool with_seq = false) {
  std::vector<int> all(kSetRanks);
  std::iota(all.begin(), all.end(), 0);
  std::vector<RankTrace> traces;
  for (int r = 0; r < kSetRanks; ++r) {
    std::vector<StepSpan> steps;
    for (int s = 0; s < kSetSteps; ++s) steps.push_back(step_us(s + 1, s * 10000, (s + 1) * 10000));
    RankTrace t = rank_trace(r, kSetRanks, steps);
    for (int k = 0; k < kInstances; ++k) {
      Call call{base_us(k) + 5 * r, base_us(k) + 400, k};
      if (!tweak(r, k, call)) continue;
      add_call(t, CollectiveKind::kAllReduce, call.start_us, call.end_us, 1 << 20, "0", all);
      if (with_seq) t.calls.back().seq = call.seq;
    }
    traces.push_back(std::move(t));
  }
  return traces;
}

bool as_is(int, int, Call&) { return true; }

// Every instance after `from` has all 8 ranks, skew 35 µs, last rank 7; each step's straggler
// is rank 7.
void expect_all_matched_after(const StepResult& result, int64_t from_step) {
  for (const CollectiveInstance& c : result.collectives) {
    if (c.step < from_step) continue;
    EXPECT_EQ(c.ranks_seen, kSetRanks);
    EXPECT_DOUBLE_EQ(c.start_skew_us, 35);
    EXPECT_DOUBLE_EQ(c.waited_us, kWaitedPerInstance);
    EXPECT_EQ(c.last_rank, 7);
  }
  std::set<int64_t> straggler_steps;
  for (const Straggler& s : result.stragglers) {
    if (s.step > 0 && s.rank == 7) straggler_steps.insert(s.step);
  }
  EXPECT_EQ(straggler_steps.size(), static_cast<size_t>(kSetSteps));
}

TEST(StepMatching, EightRanksAllMatched) {
  StepResult result = analyze(eight_ranks(as_is), {});
  EXPECT_EQ(result.collectives.size(), static_cast<size_t>(kInstances));
  EXPECT_EQ(result.matching.instances, kInstances);
  EXPECT_EQ(result.matching.matched, kInstances);
  EXPECT_EQ(result.matching.by_call_order, kInstances);
  expect_all_matched_after(result, 1);
  EXPECT_DOUBLE_EQ(result.stragglers.back().waited_on_us, kInstances * kWaitedPerInstance);
}

// The case: one collective shifted on one rank (rank 3's instance 21 moved 500 µs later,
// past the others' end). It used to stop the matching of the whole group there (20 of 96
// instances); now only that instance is left out and every later one is matched.
TEST(StepMatching, OneShiftedCollectiveLeavesOnlyItOut) {
  StepResult result = analyze(eight_ranks([](int rank, int k, Call& call) {
                                if (rank == 3 && k == 20) {
                                  call.start_us += 500;
                                  call.end_us += 500;
                                }
                                return true;
                              }),
                              {});
  EXPECT_EQ(result.matching.instances, kInstances);
  EXPECT_EQ(result.matching.matched, kInstances - 1);
  EXPECT_EQ(result.matching.unaligned, 1);
  EXPECT_EQ(result.matching.resyncs, 0);
  ASSERT_EQ(result.collectives.size(), static_cast<size_t>(kInstances - 1));
  expect_all_matched_after(result, 1);
  EXPECT_EQ(std::count_if(result.collectives.begin(), result.collectives.end(),
                          [](const CollectiveInstance& c) { return c.step > 3; }),
            kInstances - 3 * kPerStep);
  EXPECT_EQ(result.notes.back(),
            "group 0: allreduce: instance 21 (step 3) does not line up across the ranks (rank 3 "
            "outside the others' time): left out of skew and stragglers; matching goes on");
  EXPECT_DOUBLE_EQ(result.stragglers.back().waited_on_us, (kInstances - 1) * kWaitedPerInstance);
}

// Rank 5's clock is 2 ms ahead of the others' (another node): no instance overlaps as recorded.
// Its offset is estimated from the instances' ends and every instance is matched, with the
// figures of a set whose clocks agree.
TEST(StepMatching, AClockOffsetIsEstimatedAndEveryInstanceMatched) {
  std::vector<RankTrace> traces = eight_ranks([](int rank, int, Call& call) {
    if (rank == 5) {
      call.start_us += 2000;
      call.end_us += 2000;
    }
    return true;
  });
  for (StepSpan& s : traces[5].steps) {
    s.start_ns += 2000 * kUs;
    s.end_ns += 2000 * kUs;
  }
  StepResult result = analyze(traces, {});
  EXPECT_EQ(result.matching.matched, kInstances);
  EXPECT_EQ(result.matching.resyncs, 1);
  expect_all_matched_after(result, 1);
  EXPECT_EQ(result.notes.back(),
            "group 0: allreduce: from instance 1 (step 1) on, the ranks' clocks differ by more "
            "than the calls overlap: clock offsets re-estimated from the next instances' ends "
            "(rank 5 +2000.000 µs); matching goes on");
}

// Rank 2's clock jumps 1.5 ms forward at instance 41: matching re-synchronises there.
TEST(StepMatching, AClockJumpMidTraceIsFollowed) {
  StepResult result = analyze(eight_ranks([](int rank, int k, Call& call) {
                                if (rank == 2 && k >= 40) {
                                  call.start_us += 1500;
                                  call.end_us += 1500;
                                }
                                return true;
                              }),
                              {});
  EXPECT_EQ(result.matching.matched, kInstances);
  EXPECT_EQ(result.matching.resyncs, 1);
  expect_all_matched_after(result, 1);
  EXPECT_EQ(result.notes.back(),
            "group 0: allreduce: from instance 41 (step 6) on, the ranks' clocks differ by more "
            "than the calls overlap: clock offsets re-estimated from the next instances' ends "
            "(rank 2 +1500.000 µs); matching goes on");
}

// Rank 6's trace lacks instance 31 (a dropped event): that instance is matched among the other
// seven, and rank 6's next call meets the others' next one.
TEST(StepMatching, ACallMissingOnOneRankIsFound) {
  StepResult result =
      analyze(eight_ranks([](int rank, int k, Call&) { return !(rank == 6 && k == 30); }), {});
  EXPECT_EQ(result.matching.instances, kInstances);
  EXPECT_EQ(result.matching.matched, kInstances - 1);
  EXPECT_EQ(result.matching.partial, 1);
  EXPECT_EQ(result.matching.resyncs, 1);
  ASSERT_EQ(result.collectives.size(), static_cast<size_t>(kInstances));
  EXPECT_EQ(result.collectives[30].ranks_seen, kSetRanks - 1);
  EXPECT_EQ(result.notes.back(),
            "group 0: allreduce: instance 31 (step 4) is missing from rank 6's trace: matched "
            "among the other ranks; matching goes on");
  EXPECT_EQ(result.collectives[31].ranks_seen, kSetRanks);
  EXPECT_DOUBLE_EQ(result.collectives[31].start_skew_us, 35);
}

// Rank 1 recorded one allreduce the others did not (between instances 51 and 52): it is left
// out, and instance 52 is matched.
TEST(StepMatching, ACallOnlyOneRankHasIsLeftOut) {
  std::vector<RankTrace> traces = eight_ranks(as_is);
  std::vector<int> all(kSetRanks);
  std::iota(all.begin(), all.end(), 0);
  RankTrace& r1 = traces[1];
  add_call(r1, CollectiveKind::kAllReduce, base_us(50) + 505, base_us(50) + 700, 1 << 20, "0", all);
  StepResult result = analyze(traces, {});
  EXPECT_EQ(result.matching.matched, kInstances);
  EXPECT_EQ(result.matching.unaligned, 1);
  EXPECT_EQ(result.matching.resyncs, 1);
  expect_all_matched_after(result, 1);
  EXPECT_EQ(result.notes.back(),
            "group 0: allreduce: rank 1's call at instance 52 (step 7) has no counterpart on the "
            "other ranks (missing from their traces?): left out; matching goes on");
}

// With PyTorch's sequence numbers the instances are known without their order: rank 4 lacks
// seq 10 and rank 3's seq 20 is shifted; seq 10 is matched on the other seven ranks, seq 20 is
// left out, and every other instance is matched.
TEST(StepMatching, BySequenceNumber) {
  StepResult result = analyze(eight_ranks(
                                  [](int rank, int k, Call& call) {
                                    if (rank == 3 && k == 20) {
                                      call.start_us += 500;
                                      call.end_us += 500;
                                    }
                                    return !(rank == 4 && k == 10);
                                  },
                                  true),
                              {});
  EXPECT_EQ(result.matching.by_sequence_number, kInstances);
  EXPECT_EQ(result.matching.by_call_order, 0);
  EXPECT_EQ(result.matching.matched, kInstances - 2);
  EXPECT_EQ(result.matching.partial, 1);
  EXPECT_EQ(result.matching.unaligned, 1);
  ASSERT_EQ(result.collectives.size(), static_cast<size_t>(kInstances - 1));
  EXPECT_EQ(result.collectives[10].ranks_seen, kSetRanks - 1);
  EXPECT_EQ(result.notes.back(),
            "group 0: seq 20 (step 3) does not line up across the ranks (rank 3 outside the "
            "others' time): left out of skew and stragglers; matching goes on");
}

// The alltoalls of kineto-2ranks-of-128 (ranks 0 and 1 of a 128-rank job; µs, moved 74377 µs
// earlier): no n-th call overlaps the other rank's n-th. Rank 0's first ends before rank 1's
// first starts (profile windows): it is rank 0's alone, and rank 0's second meets rank 1's first
// (both end at 113458). An offset of 62.8 ms on rank 1 (its first call's end against rank 0's) would
// line up 2 of these 4 long calls too, but a clock offset must line up more than half of the
// instances it is judged on: the clocks stay, the later calls that meet nothing are left out.
TEST(StepMatching, AnOffsetThatLinesUpTooFewIsNotTaken) {
  RankTrace r0 = rank_trace(0, 2, {step_us(1, 0, 1300000)});
  RankTrace r1 = rank_trace(1, 2, {step_us(1, 0, 1300000)});
  const std::pair<int64_t, int64_t> calls0[] = {
      {20000, 30669}, {50675, 62783}, {666719, 67827}, {780307, 21124}};
  const std::pair<int64_t, int64_t> calls1[] = {
      {55534, 57924}, {159965, 41375}, {627074, 39630}, {964168, 90771}};
  for (const auto& [start, dur] : calls0) {
    add_call(r0, CollectiveKind::kAllToAll, start, start + dur, 8, "0", {0, 1});
  }
  for (const auto& [start, dur] : calls1) {
    add_call(r1, CollectiveKind::kAllToAll, start, start + dur, 8, "0", {0, 1});
  }
  StepResult result = analyze({r0, r1}, {});
  EXPECT_EQ(result.matching.instances, 5);
  EXPECT_EQ(result.matching.matched, 1);
  EXPECT_EQ(result.matching.partial, 2);  // rank 0's first call, rank 1's last
  EXPECT_EQ(result.matching.unaligned, 2);
  EXPECT_EQ(result.matching.resyncs, 0);
  ASSERT_EQ(result.collectives.size(), 3u);
  EXPECT_EQ(result.collectives[1].ranks_seen, 2);
  EXPECT_DOUBLE_EQ(result.collectives[1].start_skew_us, 55534 - 50675);
}

TEST(StepTraceSet, AMissingRankIsANote) {
  std::vector<RankTrace> traces;
  for (int r : {0, 1, 3}) traces.push_back(rank_trace(r, 4, {step_us(1, 0, 10)}));
  StepResult result = analyze(traces, {});
  ASSERT_EQ(result.ranks.size(), 3u);
  EXPECT_EQ(result.world_size, 4);
  EXPECT_EQ(result.notes.front(),
            "3 of 4 ranks: cross-rank figures (skew, stragglers, matched collectives) cover only "
            "these ranks");
}

TEST(StepTraceSet, BadSetsAreOneClearError) {
  auto message = [](std::vector<RankTrace> traces) {
    return test::error_message([&] { analyze(traces, {}); });
  };
  EXPECT_EQ(message({rank_trace(0, 2, {step_us(1, 0, 10)}), rank_trace(0, 2, {step_us(1, 0, 10)})}),
            "rank 0 appears twice: rank-0.json and rank-0.json");
  EXPECT_EQ(message({rank_trace(0, 2, {step_us(1, 0, 10)}), rank_trace(1, 4, {step_us(1, 0, 10)})}),
            "world size disagrees: rank-0.json says 2, rank-1.json says 4: traces of different "
            "runs");
  EXPECT_EQ(message({rank_trace(0, 2, {step_us(1, 0, 10), step_us(2, 10, 20)}),
                     rank_trace(1, 2, {step_us(7, 0, 10)})}),
            "step sets differ: rank-0.json has steps 1–2 (2 steps), rank-1.json has 7: traces of "
            "different runs or profiler windows");
  EXPECT_EQ(message({rank_trace(0, 1, {})}),
            "rank-0.json: no steps found: no host annotation's name matches "
            "'ProfilerStep#(\\d+)' (profile with torch.profiler.schedule and call prof.step(), "
            "or name the steps with --step-regex)");
  EXPECT_EQ(message({rank_trace(3, 2, {step_us(1, 0, 10)})}),
            "rank-3.json: rank 3 is outside the world size 2 that rank-3.json states");
}

comm::Row baseline_row(std::string layer, int nranks, uint64_t bytes, double busbw) {
  comm::Row row;
  row.layer = std::move(layer);
  row.group = "g";
  row.group_ranks = nranks;
  row.collective = "reducescatter";
  row.bytes = bytes;
  row.busbw_gbps = busbw;
  return row;
}

// Between 1 MiB (100 GB/s) and 4 MiB (200 GB/s), 2 MiB is halfway in log(size): 150 GB/s.
TEST(StepBaseline, InterpolatedInLogSizeOnTheLayerOfTheGroupSize) {
  std::vector<comm::Row> rows = {baseline_row("node", 8, 1 << 20, 100),
                                 baseline_row("node", 8, 4 << 20, 200),
                                 baseline_row("world", 16, 1 << 20, 20)};
  BaselineMatch m = match_baseline(rows, CollectiveKind::kReduceScatter, 2 << 20, 8, "");
  EXPECT_EQ(m.layer, "node");
  EXPECT_NEAR(m.busbw_gbps, 150, 1e-9);
  EXPECT_DOUBLE_EQ(match_baseline(rows, CollectiveKind::kReduceScatter, 64 << 20, 8, "").busbw_gbps,
                   200);
  EXPECT_EQ(match_baseline(rows, CollectiveKind::kReduceScatter, 1 << 20, 16, "").layer, "world");
  EXPECT_TRUE(std::isnan(
      match_baseline(rows, CollectiveKind::kReduceScatter, 1 << 20, 8, "spine").busbw_gbps));
  EXPECT_TRUE(std::isnan(match_baseline(rows, CollectiveKind::kAllReduce, 1 << 20, 8, "").busbw_gbps));
}

TEST(StepPlan, GroupsMapToParallelDimensionsByShape) {
  nlohmann::json layout = {{"tp", 2}, {"cp", 1}, {"dp", 2}, {"pp", 2}, {"ep", 1}};
  EXPECT_EQ(group_dimension({0, 1}, CollectiveKind::kAllGather, layout), "tp");
  EXPECT_EQ(group_dimension({1, 3}, CollectiveKind::kReduceScatter, layout), "dp");
  EXPECT_EQ(group_dimension({0, 4}, CollectiveKind::kSendRecv, layout), "pp");
  EXPECT_EQ(group_dimension({0, 1, 2}, CollectiveKind::kAllReduce, layout), "other");
  EXPECT_EQ(group_dimension({}, CollectiveKind::kAllReduce, layout), "other");
}

TEST(StepPlan, MeasuredBesidePredicted) {
  RankTrace t = rank_trace(0, 2, {step_us(1, 0, 1000), step_us(2, 1000, 2000)});
  t.spans = {span(0, 600, Activity::kCompute, 7), span(1000, 1600, Activity::kCompute, 7)};
  add_call(t, CollectiveKind::kReduceScatter, 700, 800, 4096, "1", {0, 1});
  add_call(t, CollectiveKind::kReduceScatter, 1700, 1800, 4096, "1", {0, 1});
  nlohmann::json plan = {{"schema", "plumb.plan/1"},
                         {"step_time_s", 0.0011},
                         {"layout", {{"tp", 1}, {"dp", 2}, {"pp", 1}}},
                         {"breakdown_s",
                          {{"compute", 0.0005}, {"tp", 0}, {"cp", 0}, {"ep", 0}, {"pp", 0},
                           {"dp", 0.0002}, {"bubble", 0}, {"optimizer", 0.0001}}}};
  AnalysisOptions options;
  options.plan = plan;
  options.plan_source = "plan.json";
  StepResult result = analyze({t}, options);
  auto row = [&](const std::string& name) {
    for (const PlanRow& r : result.plan) {
      if (r.component == name) return r;
    }
    ADD_FAILURE() << name;
    return PlanRow{};
  };
  EXPECT_DOUBLE_EQ(row("compute").measured_us, 600);
  EXPECT_DOUBLE_EQ(row("compute").predicted_us, 500);
  EXPECT_DOUBLE_EQ(row("exposed dp").measured_us, 100);
  EXPECT_DOUBLE_EQ(row("exposed dp").predicted_us, 200);
  EXPECT_DOUBLE_EQ(row("bubble (idle)").measured_us, 300);
  EXPECT_DOUBLE_EQ(row("step").measured_us, 1000);
  EXPECT_DOUBLE_EQ(row("step").predicted_us, 1100);
  nlohmann::json wrong = plan;
  wrong["breakdown_s"].erase("dp");
  options.plan = wrong;
  EXPECT_EQ(test::error_message([&] { analyze({t}, options); }),
            "plan.json: breakdown_s.dp: missing (expected a plumb.plan/1 file from plumb plan "
            "--json)");
}

TEST(StepSwimlane, DrawsTheSlowestStepForEveryRank) {
  std::vector<RankTrace> traces;
  for (int r = 0; r < 2; ++r) {
    RankTrace t = rank_trace(r, 2, {step_us(1, 0, 100), step_us(2, 100, 300 + 50 * r)});
    t.spans = {span(110, 150, Activity::kCompute, 7), span(150, 160, Activity::kCompute, 7),
               span(200, 220, Activity::kCommunication, 20)};
    traces.push_back(t);
  }
  StepResult result = analyze(traces, {});
  EXPECT_EQ(result.swimlane_step, 2);
  ASSERT_EQ(result.swimlane.size(), 2u);
  ASSERT_EQ(result.swimlane[1].intervals.size(), 2u);  // [110,160) joined, then [200,220)
  EXPECT_DOUBLE_EQ(result.swimlane[1].intervals[0].start_us, 10);
  EXPECT_DOUBLE_EQ(result.swimlane[1].intervals[0].end_us, 60);
  EXPECT_EQ(result.swimlane[1].intervals[1].activity, Activity::kCommunication);
}

}  // namespace
}  // namespace plumb::step
