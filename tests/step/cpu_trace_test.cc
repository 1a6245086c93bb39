// plumb step on CPU runs: the real traces Debian 12's PyTorch 1.13 (CPU only, gloo, legacy
// profiler) wrote for 2 DDP ranks (tests/fixtures/traces/gloo-cpu-2ranks, made by
// make_gloo_trace.py there), and synthetic traces where the answer is known by construction.
// Every expected figure below was computed from the JSON files by an independent Python reading
// (json.load; unions of [ts, ts + dur) of aten:: ops on threads without gloo: ops, and of gloo:
// and c10d:: ops; rank 1 shifted by the lower median of its 6 allreduces' end gaps to rank 0's: 5505 µs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "step/analysis.h"
#include "step/classify.h"
#include "step/clocks.h"
#include "step/kineto_reader.h"
#include "step/readers.h"
#include "support/subprocess.h"

namespace plumb::step {
namespace {

const std::string kGloo = std::string(PLUMB_TEST_FIXTURES) + "/traces/gloo-cpu-2ranks/";

RankTrace from_json(const std::string& json, const std::string& name = "rank-0.json") {
  return kineto_from_text(trace_text_from_bytes(json, name), {});
}

size_t count(const RankTrace& trace, Activity activity) {
  size_t n = 0;
  for (const DeviceSpan& span : trace.spans) n += span.activity == activity ? 1 : 0;
  return n;
}

constexpr int64_t kUs = 1000;  // ns

TEST(CpuTrace, PyTorch113GlooTraceIsReadWithTheHostAsTheDevice) {
  const RankTrace rank0 = read_kineto(kGloo + "rank-0.json", {});
  EXPECT_EQ(rank0.format, "pytorch-cpu");
  EXPECT_EQ(rank0.rank, 0);  // from the file name: the array form has no distributedInfo
  EXPECT_EQ(rank0.world_size, -1);
  EXPECT_TRUE(rank0.own_clock);
  ASSERT_EQ(rank0.steps.size(), 3u);
  EXPECT_EQ(rank0.steps[0].step, 1);
  EXPECT_EQ(rank0.steps[0].start_ns, 256 * kUs);
  EXPECT_EQ(rank0.steps[0].end_ns, (256 + 358170) * kUs);
  EXPECT_EQ(rank0.steps[2].step, 3);
  EXPECT_EQ(rank0.steps[2].end_ns, (583618 + 287806) * kUs);
  // 396 aten:: ops of non-zero length on the main thread; none runs on gloo's threads.
  EXPECT_EQ(count(rank0, Activity::kCompute), 396u);
  // 6 gloo:all_reduce ops on gloo's threads and 6 c10d::allreduce_ hand-offs on the main thread.
  EXPECT_EQ(count(rank0, Activity::kCommunication), 12u);
  EXPECT_EQ(count(rank0, Activity::kMemory), 0u);
  ASSERT_EQ(rank0.calls.size(), 6u);
  for (const CollectiveCall& call : rank0.calls) {
    EXPECT_EQ(call.kind, CollectiveKind::kAllReduce);
    EXPECT_EQ(call.name, "gloo:all_reduce");
    EXPECT_EQ(call.bytes, 0u);  // the legacy profiler writes no arguments
    EXPECT_TRUE(call.group.empty());
  }
  EXPECT_EQ(rank0.calls[0].start_ns, 127030 * kUs);
  EXPECT_EQ(rank0.calls[0].end_ns, 355411 * kUs);
  EXPECT_EQ(rank0.calls[5].end_ns, 870978 * kUs);
  const RankTrace rank1 = read_kineto(kGloo + "rank-1.json", {});
  EXPECT_EQ(rank1.rank, 1);
  EXPECT_EQ(count(rank1, Activity::kCompute), 577u);
  ASSERT_EQ(rank1.calls.size(), 6u);
  EXPECT_EQ(rank1.calls[0].start_ns, 344540 * kUs);
}

struct Expected {
  double step, compute, communication, overlapped, exposed, idle;
};

TEST(CpuTrace, PerRankStepTimeComputeAndExposedGloo) {
  const StepResult result =
      analyze({read_kineto(kGloo + "rank-1.json", {}), read_kineto(kGloo + "rank-0.json", {})}, {});
  EXPECT_EQ(result.world_size, -1);
  ASSERT_EQ(result.ranks.size(), 2u);
  const std::vector<std::vector<Expected>> expected{
      {{358170, 125981, 237352, 6431, 230921, 1268},
       {225121, 90615, 144917, 11434, 133483, 1023},
       {287806, 88471, 219087, 24928, 194159, 5176}},
      {{364810, 344686, 22437, 12913, 9524, 10600},
       {228132, 218292, 16917, 8725, 8192, 1648},
       {280474, 276818, 4092, 2541, 1551, 2105}}};
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(result.ranks[r].rank, static_cast<int>(r));
    EXPECT_EQ(result.ranks[r].format, "pytorch-cpu");
    ASSERT_EQ(result.ranks[r].steps.size(), 3u);
    for (size_t s = 0; s < 3; ++s) {
      const StepBreakdown& got = result.ranks[r].steps[s];
      const Expected& want = expected[r][s];
      SCOPED_TRACE(testing::Message() << "rank " << r << " step " << got.step);
      EXPECT_EQ(got.step, static_cast<int64_t>(s + 1));
      EXPECT_DOUBLE_EQ(got.step_time_us, want.step);
      EXPECT_DOUBLE_EQ(got.compute_us, want.compute);
      EXPECT_DOUBLE_EQ(got.communication_us, want.communication);
      EXPECT_DOUBLE_EQ(got.overlapped_us, want.overlapped);
      EXPECT_DOUBLE_EQ(got.exposed_communication_us, want.exposed);
      EXPECT_DOUBLE_EQ(got.idle_us, want.idle);
      EXPECT_DOUBLE_EQ(got.memory_us, 0);
    }
  }
}

TEST(CpuTrace, RankOneIsTheStragglerOnALinedUpClock) {
  const StepResult result =
      analyze({read_kineto(kGloo + "rank-0.json", {}), read_kineto(kGloo + "rank-1.json", {})}, {});
  EXPECT_EQ(result.matching.instances, 6);
  EXPECT_EQ(result.matching.matched, 6);
  ASSERT_EQ(result.collectives.size(), 6u);
  // Rank 1's starts on rank 0's clock (− 5505 µs) minus rank 0's: each instance's skew.
  const std::vector<double> skews{212005, 219674, 126103, 122237, 204732, 189550};
  const std::vector<int64_t> steps{1, 1, 2, 2, 3, 3};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(result.collectives[i].last_rank, 1);
    EXPECT_EQ(result.collectives[i].step, steps[i]);
    EXPECT_DOUBLE_EQ(result.collectives[i].start_skew_us, skews[i]);
    EXPECT_EQ(result.collectives[i].kind, CollectiveKind::kAllReduce);
  }
  ASSERT_EQ(result.stragglers.size(), 4u);
  const std::vector<std::pair<int64_t, double>> waited{
      {1, 431679}, {2, 248340}, {3, 394282}, {-1, 1074301}};
  for (size_t i = 0; i < waited.size(); ++i) {
    EXPECT_EQ(result.stragglers[i].step, waited[i].first);
    EXPECT_EQ(result.stragglers[i].rank, 1);
    EXPECT_DOUBLE_EQ(result.stragglers[i].waited_on_us, waited[i].second);
  }
  EXPECT_NE(std::find(result.notes.begin(), result.notes.end(),
                      "rank 1 (" + kGloo +
                          "rank-1.json): its times count from its own profiler's start (PyTorch's "
                          "legacy profiler): put on rank 0's clock by the median gap between their "
                          "6 collectives' ends (-5505.000 µs)"),
            result.notes.end());
}

TEST(CpuTrace, TheRankMustComeFromTheFileName) {
  EXPECT_EQ(test::error_message([] {
              from_json(R"([{"ph": "X", "name": "ProfilerStep#1", "ts": 0, "dur": 10, "tid": 1,
                             "pid": "CPU functions", "args": {}}])",
                        "/t/host_1234.1700000000.pt.trace.json");
            }),
            "/t/host_1234.1700000000.pt.trace.json: no rank: the file is the legacy profiler's "
            "array of events (PyTorch without Kineto), which never names its rank, and the file "
            "name does not say (name it rank-N.json: export_chrome_trace(f\"rank-{rank}.json\"))");
}

// Main thread 1: aten::mm [0, 40), c10d::allreduce_ [40, 45); gloo thread 2: gloo:all_reduce
// [42, 90) and an aten::copy_ inside it (part of the transfer, not computation).
constexpr const char* kCpuRank = R"([
  {"ph": "X", "name": "ProfilerStep#7", "ts": 0, "dur": 100, "tid": 1, "pid": "CPU functions"},
  {"ph": "X", "name": "aten::mm", "ts": 0, "dur": 40, "tid": 1, "pid": "CPU functions"},
  {"ph": "X", "name": "c10d::allreduce_", "ts": 40, "dur": 5, "tid": 1, "pid": "CPU functions"},
  {"ph": "X", "name": "gloo:all_reduce", "ts": 42, "dur": 48, "tid": 2, "pid": "CPU functions"},
  {"ph": "X", "name": "aten::copy_", "ts": 50, "dur": 10, "tid": 2, "pid": "CPU functions"}])";

TEST(CpuTrace, ByConstructionAtenOnGlooThreadsIsPartOfTheTransfer) {
  const StepResult result = analyze({from_json(kCpuRank)}, {});
  ASSERT_EQ(result.ranks.size(), 1u);
  const StepBreakdown& step = result.ranks[0].steps.at(0);
  EXPECT_EQ(step.step, 7);
  EXPECT_DOUBLE_EQ(step.compute_us, 40);
  EXPECT_DOUBLE_EQ(step.communication_us, 50);  // c10d's hand-off [40, 45) ∪ gloo [42, 90)
  EXPECT_DOUBLE_EQ(step.overlapped_us, 0);
  EXPECT_DOUBLE_EQ(step.exposed_communication_us, 50);
  EXPECT_DOUBLE_EQ(step.idle_us, 10);
}

TEST(CpuTrace, AGpuTraceKeepsItsKernelsAndIgnoresHostOps) {
  const RankTrace trace = from_json(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": "40"},
    {"ph": "X", "cat": "cpu_op", "name": "gloo:all_reduce", "ts": 10, "dur": 30, "tid": 9},
    {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 50, "dur": 20, "args": {"stream": 7}}]})");
  EXPECT_EQ(trace.format, "kineto");
  EXPECT_FALSE(trace.own_clock);
  ASSERT_EQ(trace.spans.size(), 1u);  // the kernel; aten's string 'dur' is not judged
  EXPECT_EQ(trace.spans[0].stream, 7u);
  EXPECT_TRUE(trace.calls.empty());
}

TEST(CpuTrace, KinetoCpuOnlyObjectFormIsACpuRunOnACommonClock) {
  const RankTrace trace = from_json(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "ts": 1000, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1000, "dur": 40, "tid": 1},
    {"ph": "X", "cat": "cpu_op", "name": "gloo:broadcast", "ts": 1040, "dur": 30, "tid": 9}],
    "distributedInfo": {"rank": 3, "world_size": 4}})");
  EXPECT_EQ(trace.format, "pytorch-cpu");
  EXPECT_FALSE(trace.own_clock);
  EXPECT_EQ(trace.rank, 3);
  ASSERT_EQ(trace.calls.size(), 1u);
  EXPECT_EQ(trace.calls[0].kind, CollectiveKind::kBroadcast);
}

TEST(CpuTrace, DamagedHostOpsFollowTheDeviceEventRules) {
  EXPECT_EQ(test::error_message([] {
              from_json(R"([
      {"ph": "X", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "tid": 1},
      {"ph": "X", "name": "aten::mm", "ts": 0, "dur": "40", "tid": 1}])");
            }),
            "rank-0.json: event 1 ('aten::mm'): 'dur' is a string (\"40\"), expected a number "
            "of µs");
  const RankTrace trace = from_json(R"([
      {"ph": "X", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "tid": 1},
      {"ph": "X", "name": "gloo:all_reduce", "ts": 10, "dur": -5, "tid": 2},
      {"ph": "X", "name": "gloo:all_reduce", "ts": 20, "dur": 5, "tid": 2}])");
  ASSERT_EQ(trace.dropped.size(), 1u);
  EXPECT_EQ(trace.dropped[0].why, "a negative 'dur'");
  EXPECT_EQ(trace.dropped[0].first, "event 1 ('gloo:all_reduce')");
  EXPECT_EQ(trace.calls.size(), 1u);
}

TEST(CpuTrace, OwnClocksAreLinedUpByTheirCollectivesEnds) {
  // Rank 1's clock runs 1000 µs behind rank 0's: its allreduces end at 1000 + [95, 195].
  auto rank = [](int r, int64_t shift_us, int64_t start_us) {
    RankTrace t;
    t.rank = r;
    t.source = "rank-" + std::to_string(r) + ".json";
    t.own_clock = true;
    t.steps = {{1, (shift_us + 0) * kUs, (shift_us + 100) * kUs},
               {2, (shift_us + 100) * kUs, (shift_us + 200) * kUs}};
    for (int64_t end : {95, 195}) {
      CollectiveCall call;
      call.kind = CollectiveKind::kAllReduce;
      call.start_ns = (shift_us + end - start_us) * kUs;
      call.end_ns = (shift_us + end) * kUs;
      t.calls.push_back(call);
      t.spans.push_back({call.start_ns, call.end_ns, 0, Activity::kCommunication,
                         static_cast<int32_t>(t.calls.size() - 1)});
    }
    return t;
  };
  std::vector<RankTrace> traces{rank(0, 0, 50), rank(1, 1000, 10)};
  std::vector<std::string> notes;
  line_up_own_clocks(traces, notes);
  EXPECT_EQ(traces[1].steps[0].start_ns, 0);
  EXPECT_EQ(traces[1].calls[1].end_ns, 195 * kUs);
  EXPECT_EQ(traces[1].spans[0].start_ns, 85 * kUs);
  EXPECT_EQ(traces[0].calls[0].start_ns, 45 * kUs);  // the reference stays
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "rank 1 (rank-1.json): its times count from its own profiler's start (PyTorch's "
            "legacy profiler): put on rank 0's clock by the median gap between their 2 "
            "collectives' ends (-1000.000 µs)");
  traces[1].calls.clear();
  notes.clear();
  line_up_own_clocks(traces, notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "rank 1 (rank-1.json): its times count from its own profiler's start and no "
            "collective in its steps and rank 0's can line the two up: its skew and waiting "
            "times against other ranks are not known");
}

}  // namespace
}  // namespace plumb::step
