// Periodic memory_stats() dumps: the fixture's known answers (tests/fixtures/mem/README.md,
// "memory_stats.jsonl"), a healthy series, counters that rise, the format's recognition, and exact
// errors.
#include "mem/stats_reader.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "mem/snapshot_reader.h"

namespace plumb::mem {
namespace {

const std::string kFixture = PLUMB_TEST_FIXTURES "/mem/memory_stats.jsonl";
constexpr uint64_t kMiB = 1 << 20;

// One dump with every key the reader needs; `extra` goes in as it is (", \"step\": 3").
std::string dump(uint64_t allocated, uint64_t reserved, const std::string& extra = "",
                 uint64_t retries = 0, uint64_t ooms = 0) {
  return fmt::format(
      "{{\"allocated_bytes.all.current\": {0}, \"allocated_bytes.all.peak\": {1}, "
      "\"active_bytes.all.current\": {0}, \"active_bytes.all.peak\": {1}, "
      "\"reserved_bytes.all.current\": {2}, \"reserved_bytes.all.peak\": {2}, "
      "\"inactive_split_bytes.all.current\": 0, \"segment.all.current\": 3, "
      "\"num_alloc_retries\": {3}, \"num_ooms\": {4}{5}}}\n",
      allocated, allocated + 512 * kMiB, reserved, retries, ooms, extra);
}

std::string error_of(const std::string& text) {
  try {
    parse_memory_stats(text, "stats.jsonl");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(StatsReader, FixtureKnownAnswers) {
  const StatsSeries s = read_memory_stats(kFixture);
  ASSERT_EQ(s.points.size(), 100u);
  const StatsPoint& first = s.points.front();
  EXPECT_EQ(first.step, 1u);
  EXPECT_EQ(first.allocated, 6443499520u);
  EXPECT_EQ(first.allocated_peak, 6980370432u);
  EXPECT_EQ(first.reserved, 6981419008u);
  const StatsPoint& last = s.points.back();
  EXPECT_EQ(last.step, 100u);
  EXPECT_EQ(last.allocated, 6547308544u);
  EXPECT_EQ(last.allocated_peak, 7084179456u);
  EXPECT_EQ(last.reserved, 7084179456u);
  for (size_t i = 1; i < s.points.size(); ++i) {
    // Reserved grows by 2 MiB every odd step (one small-pool segment holds two 1 MiB tensors).
    const uint64_t growth = s.points[i].reserved - s.points[i - 1].reserved;
    EXPECT_EQ(growth, s.points[i].step % 2 == 1 ? 2 * kMiB : 0) << "step " << s.points[i].step;
    EXPECT_EQ(s.points[i].alloc_retries, 0u);
    EXPECT_EQ(s.points[i].ooms, 0u);
  }
}

TEST(StatsReader, FixtureAnalysisCreepsOneMiBPerStep) {
  const StatsAnalysis a = analyze_stats(read_memory_stats(kFixture));
  EXPECT_NEAR(a.creep.slope_bytes_per_step, 1048576.0, 1.0);
  EXPECT_EQ(a.creep.verdict, "leak");
  EXPECT_EQ(a.creep.steps, 100u);  // every dump is a complete step: none is dropped
  EXPECT_LE(a.creep.ci95_low, a.creep.slope_bytes_per_step);
  EXPECT_GT(a.creep.ci95_low, 0);
  EXPECT_EQ(a.peak.allocated, 7084179456u);
  EXPECT_EQ(a.peak_allocated_step, 100u);
  EXPECT_EQ(a.peak.reserved, 7084179456u);
  EXPECT_EQ(a.peak_reserved_step, 99u);  // reserved grows on odd steps only: first at 99
  EXPECT_EQ(a.peak.active, 7084179456u);
  EXPECT_DOUBLE_EQ(a.fragmentation, 0);
  EXPECT_EQ(a.end_free, 7084179456u - 6547308544u);
  EXPECT_EQ(a.timeline.size(), 100u);
  EXPECT_EQ(a.alloc_retries, 0u);
  EXPECT_FALSE(a.first_retry_step.has_value());
  EXPECT_EQ(a.ooms, 0u);
  EXPECT_FALSE(a.first_oom_step.has_value());
}

// Allocated wobbles by ±2 MiB around 4 GiB without rising: slope 0, "stable".
TEST(StatsReader, HealthySeriesIsStable) {
  std::string text;
  for (uint64_t step = 1; step <= 20; ++step) {
    const uint64_t wobble = (step % 3) * 2 * kMiB;
    text += dump(4096 * kMiB + wobble, 5120 * kMiB, fmt::format(", \"step\": {}", step * 10));
  }
  const StatsAnalysis a = analyze_stats(parse_memory_stats(text, "healthy.jsonl"));
  EXPECT_EQ(a.creep.verdict, "stable");
  EXPECT_LT(a.creep.ci95_low, 0);
  EXPECT_GT(a.creep.ci95_high, 0);
  EXPECT_NEAR(a.fragmentation, 1 - (4100.0 + 512) / 5120, 1e-12);
}

// Dumps every 10 steps: the slope is per step, not per dump.
TEST(StatsReader, CreepIsPerStepWhenDumpsSkipSteps) {
  std::string text;
  for (uint64_t i = 0; i < 10; ++i) {
    text += dump(1024 * kMiB + i * 10 * kMiB, 4096 * kMiB, fmt::format(", \"step\": {}", 10 * i));
  }
  const StatsAnalysis a = analyze_stats(parse_memory_stats(text, "every10.jsonl"));
  EXPECT_NEAR(a.creep.slope_bytes_per_step, 1.0 * kMiB, 1.0);
  EXPECT_EQ(a.creep.verdict, "leak");
}

TEST(StatsReader, WithoutStepsTheLineOrderCountsAndFewDumpsAreTooFew) {
  const StatsSeries s = parse_memory_stats("# header\n" + dump(1, 2) + "\n" + dump(3, 4), "s.jsonl");
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.points[0].step, 1u);
  EXPECT_EQ(s.points[1].step, 2u);
  EXPECT_EQ(analyze_stats(s).creep.verdict, "too few steps");
}

TEST(StatsReader, RetriesAndOomsAreCountedFromTheirFirstRise) {
  std::string text;
  const uint64_t retries[] = {0, 0, 2, 2, 5};
  const uint64_t ooms[] = {0, 0, 0, 1, 1};
  for (size_t i = 0; i < 5; ++i) text += dump(kMiB, 2 * kMiB, "", retries[i], ooms[i]);
  const StatsAnalysis a = analyze_stats(parse_memory_stats(text, "s.jsonl"));
  EXPECT_EQ(a.alloc_retries, 5u);
  EXPECT_EQ(a.first_retry_step, 3u);
  EXPECT_EQ(a.ooms, 1u);
  EXPECT_EQ(a.first_oom_step, 4u);
}

TEST(StatsReader, RecognisedBeforeEventsAndRefusedAsATrace) {
  EXPECT_TRUE(looks_like_memory_stats("\n# c\n" + dump(1, 2)));
  EXPECT_TRUE(is_memory_stats_file(kFixture));
  EXPECT_FALSE(looks_like_memory_stats("{\"action\": \"alloc\", \"addr\": 0, \"size\": 512}\n"));
  EXPECT_FALSE(is_memory_stats_file(PLUMB_TEST_FIXTURES "/mem/healthy.pickle"));
  EXPECT_FALSE(is_memory_stats_file(PLUMB_TEST_FIXTURES "/mem/healthy.json"));
  EXPECT_FALSE(is_memory_stats_file(PLUMB_TEST_FIXTURES "/mem/no_such_file"));
  try {
    read_trace(kFixture, 0);
    ADD_FAILURE() << "read as a trace";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), kFixture + ": periodic memory_stats() dumps, not an allocator trace: "
                                                "expected a snapshot or plumb.mem-events/1 lines");
  }
}

TEST(StatsReader, ErrorsNameTheLineAndTheField) {
  std::string bad = dump(1, 2);
  bad.replace(bad.find("\"reserved_bytes.all.current\": 2"), 31, "\"reserved_bytes.all.current\": \"2 GiB\"");
  EXPECT_EQ(error_of(dump(1, 2) + bad),
            "stats.jsonl:2: 'reserved_bytes.all.current' must be a non-negative integer, got \"2 GiB\"");
  std::string negative = dump(1, 2);
  negative.replace(negative.find("\"num_ooms\": 0"), 13, "\"num_ooms\": -1");
  EXPECT_EQ(error_of(negative), "stats.jsonl:1: 'num_ooms' must be a non-negative integer, got -1");
  std::string missing = dump(1, 2);
  missing.replace(missing.find("\"segment.all.current\": 3, "), 26, "");
  EXPECT_EQ(error_of("\n" + missing),
            "stats.jsonl:2: missing 'segment.all.current' (a torch.cuda.memory_stats() key)");
  EXPECT_EQ(error_of(dump(1, 2, ", \"step\": 5") + dump(1, 2, ", \"step\": 5")),
            "stats.jsonl:2: 'step' 5 does not follow step 5 (line 1): steps must increase");
  EXPECT_EQ(error_of(dump(1, 2, ", \"step\": 5") + dump(1, 2)),
            "stats.jsonl:2: missing 'step' (the first dump, line 1, has one: give every dump a step or none)");
  EXPECT_EQ(error_of(dump(1, 2) + dump(1, 2, ", \"step\": 5")),
            "stats.jsonl:2: 'step' given, but the first dump (line 1) has none: give every dump a step or none");
  EXPECT_EQ(error_of("{\"allocated_bytes.all.current\": 1,\n"), "stats.jsonl:1: not valid JSON: parse error at line 1, column 35: syntax error "
            "while parsing object key - unexpected end of input; expected string literal");
  EXPECT_EQ(error_of("[1]\n"), "stats.jsonl:1: expected a JSON object (one memory_stats() dict per line)");
  EXPECT_EQ(error_of("# nothing\n"), "stats.jsonl: no memory_stats() dumps");
}

// Every problem of the file at once, one line each: a second bad line is not hidden by the first.
TEST(StatsReader, EveryProblemInOnePass) {
  EXPECT_EQ(error_of(dump(1, 2, ", \"step\": 2") + "[]\n" + dump(1, 2, ", \"step\": 1")),
            "stats.jsonl:2: expected a JSON object (one memory_stats() dict per line)\n"
            "stats.jsonl:3: 'step' 1 does not follow step 2 (line 1): steps must increase");
  std::string many;
  for (int i = 0; i < 25; ++i) many += "[]\n";
  const std::string e = error_of(many);
  EXPECT_EQ(e.substr(e.rfind('\n') + 1), "stats.jsonl: 5 more problem(s)");
}

}  // namespace
}  // namespace plumb::mem
