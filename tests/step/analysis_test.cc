// The step analysis on synthetic traces whose overlap, idle time and straggler are known by
// construction (docs/step.md has the same worked example).
#include <gtest/gtest.h>

#include <cmath>

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
  EXPECT_TRUE(std::isnan(steps[0].preparing_us));  // no computation in the step
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
// first one [105, 120) started, so it has no counterpart; the next ones meet.
TEST(StepCollectives, LeadingCallsOfAnEarlierWindowAreLeftUnmatched) {
  RankTrace r0 = rank_trace(0, 2, {step_us(1, 0, 1000)});
  add_call(r0, CollectiveKind::kAllReduce, 10, 20, 8, "0", {0, 1});
  add_call(r0, CollectiveKind::kAllReduce, 100, 120, 8, "0", {0, 1});
  RankTrace r1 = rank_trace(1, 2, {step_us(1, 0, 1000)});
  add_call(r1, CollectiveKind::kAllReduce, 105, 120, 8, "0", {0, 1});
  StepResult result = analyze({r0, r1}, {});
  ASSERT_EQ(result.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(result.collectives[0].start_skew_us, 5);
  EXPECT_EQ(result.notes.back(),
            "group 0: 1 leading allreduce call(s) end before another rank's first one starts "
            "(profile windows opened at different times): left unmatched");
}

// Kinds are matched apart (an allgather between two allreduces on one rank only does not shift
// them); calls that cannot be one instance (no overlap in time) stop the match with a note.
TEST(StepCollectives, CallsThatDoNotOverlapStopTheMatchWithANote) {
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
            "group 0: allreduce call 2 does not overlap in time across the ranks, as one instance "
            "must: the ranks' calls do not line up from there (calls missing from some traces?); "
            "1 instance(s) matched");
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
