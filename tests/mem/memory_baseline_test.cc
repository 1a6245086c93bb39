// The memory baseline of train-events lines (docs/mem.md, "Creep from train-events"): the worked
// examples of the fit and of MSER's warm-up, a flat noisy series, a 1 MiB/step leak, the
// checkpoint check's pass, fail and missing cases, too few steps, and the reader's messages.
#include "mem/memory_baseline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/units.h"
#include "mem/train_memory.h"
#include "support/subprocess.h"

namespace plumb::mem {
namespace {

std::string line(int64_t step, const std::string& rank, double allocated,
                 const std::string& extra = "") {
  return fmt::format(R"({{"schema":"plumb.train-events/1","step":{},"step_seconds":1,"rank":"{}",)"
                     R"("memory":{{"allocated_bytes":{:.0f}}}{}}})",
                     step, rank, allocated, extra) + "\n";
}

RankSeries series_of(const std::vector<double>& allocated, int64_t first_step = 1) {
  RankSeries s{"0", {}};
  for (size_t i = 0; i < allocated.size(); ++i) {
    s.points.push_back({first_step + static_cast<int64_t>(i), allocated[i], {}, {}, "", i + 1});
  }
  return s;
}

// Step-to-step noise, the same on every platform: mt19937's raw output is fixed by the standard
// (its distributions are not), mapped to [-amplitude, +amplitude].
std::vector<double> noisy(size_t n, double level, double per_step, double amplitude) {
  std::mt19937 engine(29);
  std::vector<double> y;
  for (size_t i = 0; i < n; ++i) {
    const double unit = static_cast<double>(engine()) / 4294967295.0 * 2 - 1;
    y.push_back(std::round(level + per_step * static_cast<double>(i) + amplitude * unit));
  }
  return y;
}

// Steps 1..5, allocated 10, 12, 11, 15, 17 bytes, no warm-up:
//   x̄ = 3, ȳ = 13; x − x̄ = −2 −1 0 1 2; y − ȳ = −3 −1 −2 2 4
//   Sxx = 4+1+0+1+4 = 10, Sxy = 6+1+0+2+8 = 17, slope = 17/10 = 1.7 bytes per step
//   fitted 9.6 11.3 13 14.7 16.4, residuals 0.4 0.7 −2 0.3 0.6, SSE = 0.16+0.49+4+0.09+0.36 = 5.1
//   SE = sqrt(SSE/(n−2)/Sxx) = sqrt(5.1/3/10) = sqrt(0.17) = 0.412310563
//   t(0.975, 3) = 3.182: 3.182 × 0.412310563 = 1.311972211, CI = [0.388027789, 3.011972211]
// The interval excludes 0, but the rise 1.7 × 4 = 6.8 bytes is under the 1 MiB floor: flat.
// Settled: the median of 10 12 11 15 17 = 12.
TEST(MemoryBaseline, WorkedExampleOfTheFit) {
  const RankMemory r = rank_memory(series_of({10, 12, 11, 15, 17}), 0);
  EXPECT_EQ(r.warmup_steps, 0u);
  EXPECT_EQ(r.creep.steps, 5u);
  EXPECT_NEAR(r.creep.slope_bytes_per_step, 1.7, 1e-12);
  EXPECT_NEAR(r.creep.ci95_low, 0.388027789, 1e-9);
  EXPECT_NEAR(r.creep.ci95_high, 3.011972211, 1e-9);
  EXPECT_EQ(r.verdict, "flat");
  EXPECT_EQ(r.settled_bytes, 12.0);
  EXPECT_EQ(r.peak_bytes, 17.0);
}

// y = 0 50 100 100 100 100, d ≤ n/2 = 3:
//   d=0: ȳ = 75, Σ(y−ȳ)² = 5625+625+4·625 = 8750, / 6² = 243.06
//   d=1: ȳ = 90, Σ = 1600 + 4·100 = 2000, / 5² = 80
//   d=2: every value 100: 0;  d=3: 0 too; the smallest d of the minimum: 2.
TEST(MemoryBaseline, MserWorkedExample) {
  EXPECT_EQ(mser_warmup({0, 50, 100, 100, 100, 100}), 2u);
  EXPECT_EQ(mser_warmup({}), 0u);
  EXPECT_EQ(mser_warmup({7}), 0u);
  EXPECT_EQ(mser_warmup({5, 5, 5, 5}), 0u);  // nothing to leave out
}

TEST(MemoryBaseline, FlatNoisySeriesAfterAWarmupIsFlat) {
  std::vector<double> y = noisy(200, 4.0 * kGiB, 0, 8.0 * kMiB);
  for (size_t i = 0; i < 10; ++i) y[i] = static_cast<double>(kGiB) * (1 + 0.3 * static_cast<double>(i));
  const RankMemory r = rank_memory(series_of(y), std::nullopt);
  EXPECT_GE(r.warmup_steps, 10u);
  EXPECT_LE(r.warmup_steps, 20u);
  EXPECT_EQ(r.verdict, "flat");
  EXPECT_LT(r.creep.ci95_low, 0);
  EXPECT_GT(r.creep.ci95_high, 0);
  EXPECT_NEAR(*r.settled_bytes, 4.0 * kGiB, 8.0 * kMiB);
}

// The issue's check: a leak of 1 MiB per step under ±8 MiB of noise is found within 20%.
TEST(MemoryBaseline, OneMebibytePerStepLeakIsALeakWithinTwentyPercent) {
  const RankMemory r = rank_memory(series_of(noisy(200, 4.0 * kGiB, 1.0 * kMiB, 8.0 * kMiB)),
                                   std::nullopt);
  EXPECT_EQ(r.verdict, "leak");
  EXPECT_NEAR(r.creep.slope_bytes_per_step, 1.0 * kMiB, 0.2 * kMiB);
  EXPECT_GT(r.creep.ci95_low, 0);
}

TEST(MemoryBaseline, TooFewStepsCannotBeJudged) {
  // MSER over d ≤ 1: d=0 gives 20000/3² = 2222, d=1 gives 5000/2² = 1250: the first line is the
  // warm-up, and the level is the median of 200 and 300.
  const RankMemory r = rank_memory(series_of({100, 200, 300}), std::nullopt);
  EXPECT_EQ(r.verdict, "too few steps");
  EXPECT_EQ(r.warmup_steps, 1u);
  EXPECT_EQ(r.settled_bytes, 250.0);
  // A warm-up as long as the series leaves no level at all: none, not 0.
  const RankMemory none = rank_memory(series_of({100, 200, 300}), 5);
  EXPECT_EQ(none.warmup_steps, 3u);
  EXPECT_FALSE(none.settled_bytes.has_value());
  EXPECT_EQ(none.verdict, "too few steps");
  // Four lines but two steps (a restart repeated them): still too few.
  RankSeries repeated = series_of({1, 2, 3, 4});
  repeated.points[2].step = 1;
  repeated.points[3].step = 2;
  EXPECT_EQ(rank_memory(repeated, 0).verdict, "too few steps");
}

std::vector<MemoryPoint> marked(const std::vector<double>& y, size_t saved, size_t loaded) {
  RankSeries s = series_of(y);
  if (saved < y.size()) s.points[saved].checkpoint = "saved";
  if (loaded < y.size()) s.points[loaded].checkpoint = "loaded";
  return s.points;
}

constexpr double kLevel = 4.0 * kGiB;  // tolerance: 1% of it, 42949672.96 bytes (> 16 MiB)

TEST(CheckpointCheck, PassWithinTheTolerance) {
  const CheckpointCheck c =
      check_checkpoint(marked({kLevel, kLevel, kLevel + kMiB, kLevel, kLevel - 2 * kMiB}, 2, 4));
  EXPECT_EQ(c.verdict, "pass");
  EXPECT_EQ(c.before_save_bytes, kLevel);
  EXPECT_EQ(c.after_save_bytes, kLevel + kMiB);
  EXPECT_EQ(c.after_load_bytes, kLevel - 2 * kMiB);
  EXPECT_EQ(c.save_step, 3);
  EXPECT_EQ(c.load_step, 5);
  EXPECT_DOUBLE_EQ(c.tolerance_bytes, 42949672.96);
  EXPECT_EQ(c.departure_bytes, 2.0 * kMiB);
  EXPECT_EQ(c.reason, "");
}

TEST(CheckpointCheck, SmallLevelsGetSixteenMebibytes) {
  const CheckpointCheck c = check_checkpoint(marked({1.0 * kGiB, 1.0 * kGiB, 1.0 * kGiB + 15 * kMiB, 1.0 * kGiB}, 2, 3));
  EXPECT_EQ(c.tolerance_bytes, 16.0 * kMiB);
  EXPECT_EQ(c.verdict, "pass");
}

TEST(CheckpointCheck, FailNamesTheLargerDeparture) {
  const CheckpointCheck c =
      check_checkpoint(marked({kLevel, kLevel, kLevel, kLevel + 100 * kMiB}, 2, 3));
  EXPECT_EQ(c.verdict, "fail");
  EXPECT_EQ(c.reason,
            "+100 MiB after the load against the level before the save, beyond the tolerance of "
            "41.0 MiB");
  const CheckpointCheck save = check_checkpoint(marked({kLevel, kLevel - 64 * kMiB, kLevel}, 1, 9));
  EXPECT_EQ(save.verdict, "fail");  // no load needed to fail
  EXPECT_EQ(save.reason,
            "-64 MiB after the save against the level before the save, beyond the tolerance of "
            "41.0 MiB");
}

TEST(CheckpointCheck, MissingSaysWhatIsMissing) {
  const CheckpointCheck none = check_checkpoint(marked({kLevel, kLevel}, 9, 9));
  EXPECT_EQ(none.verdict, "missing");
  EXPECT_EQ(none.reason,
            "no line marks a checkpoint save or load (\"checkpoint\": \"saved\" or \"loaded\")");
  const CheckpointCheck no_load = check_checkpoint(marked({kLevel, kLevel}, 1, 9));
  EXPECT_EQ(no_load.verdict, "missing");
  EXPECT_EQ(no_load.reason, "no line marks a checkpoint load (\"checkpoint\": \"loaded\")");
  EXPECT_EQ(no_load.before_save_bytes, kLevel);
  const CheckpointCheck no_save = check_checkpoint(marked({kLevel, kLevel}, 9, 1));
  EXPECT_EQ(no_save.verdict, "missing");
  EXPECT_EQ(no_save.reason,
            "no line marks a checkpoint save (\"checkpoint\": \"saved\"): no level to compare the "
            "load with");
  const CheckpointCheck first = check_checkpoint(marked({kLevel, kLevel}, 0, 1));
  EXPECT_EQ(first.verdict, "missing");
  EXPECT_EQ(first.reason, "the \"saved\" line (line 1) is the rank's first: no level before the save");
}

TEST(MemorySeries, RanksInterleavedAreSplitAndOrdered) {
  std::string text;
  for (int step = 1; step <= 6; ++step) {
    text += line(step, "10", kLevel + step * 8 * kMiB);
    text += line(step, "2", kLevel);
    text += "\n";  // blank lines are skipped
    text += fmt::format(R"({{"schema":"plumb.train-events/1","step":{},"step_seconds":1,"rank":"2"}})", step) + "\n";
  }
  const MemorySeries s = parse_memory_series(text, "run.jsonl");
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].rank, "2");
  EXPECT_EQ(s.ranks[1].rank, "10");
  EXPECT_EQ(s.lines, 18u);
  EXPECT_EQ(s.without_memory, 6u);
  EXPECT_EQ(s.ranks[1].points[0].line, 1u);
  EXPECT_EQ(s.ranks[0].points[1].line, 6u);
  const MemoryBaseline b = memory_baseline(s, 0);
  ASSERT_TRUE(b.worst.has_value());
  EXPECT_EQ(b.ranks[*b.worst].rank, "10");
  // 8 MiB per step, exact: the interval is [8 MiB, 8 MiB], and the rise over steps 1..6, 40 MiB,
  // passes the floor max(1 MiB, 0.5% of the 4.05 GiB peak = 20.7 MiB).
  EXPECT_EQ(b.ranks[1].verdict, "leak");
  EXPECT_EQ(b.ranks[1].creep.slope_bytes_per_step, 8.0 * kMiB);
  EXPECT_TRUE(b.leaks());
  EXPECT_EQ(b.checkpoint.verdict, "missing");
}

TEST(MemorySeries, TheDecisiveCheckpointIsTheFailingRank) {
  std::string text;
  for (int step = 1; step <= 6; ++step) {
    const std::string mark = step == 4 ? R"(,"checkpoint":"saved")"
                             : step == 5 ? R"(,"checkpoint":"loaded")" : "";
    text += line(step, "0", kLevel, mark);
    text += line(step, "1", step == 5 ? kLevel + 50 * kMiB : kLevel, mark);
  }
  const MemoryBaseline b = memory_baseline(parse_memory_series(text, "run.jsonl"), std::nullopt);
  EXPECT_EQ(b.ranks[0].checkpoint.verdict, "pass");
  EXPECT_EQ(b.ranks[1].checkpoint.verdict, "fail");
  EXPECT_EQ(b.checkpoint.rank, "1");
  EXPECT_EQ(b.checkpoint.verdict, "fail");
  EXPECT_EQ(b.checkpoint.after_load_bytes, kLevel + 50 * kMiB);
}

TEST(MemorySeries, EveryMalformedLineIsNamedAtOnce) {
  const std::string text = line(1, "0", 5) + R"({"schema":"plumb.train-events/1","step":"2"})" + "\n" +
                           line(3, "0", 5) + R"({"schema":"plumb.train-events/1","step":4,"step_seconds":1,)"
                           R"("checkpoint":"written"})" + "\n";
  EXPECT_EQ(test::error_message([&] { parse_memory_series(text, "run.jsonl"); }),
            "run.jsonl:2: 'step' is a string, expected a whole number from 0 to 9007199254740992\n"
            "run.jsonl:4: 'checkpoint' is 'written', expected 'saved' or 'loaded'");
}

TEST(MemorySeries, ATornLastLineIsSkipped) {
  const std::string text = line(1, "0", 5) + line(2, "0", 6) + R"({"schema":"plumb.train-ev)";
  const MemorySeries s = parse_memory_series(text, "run.jsonl");
  EXPECT_EQ(s.lines, 2u);
  EXPECT_EQ(s.ranks[0].points.size(), 2u);
}

TEST(MemorySeries, NothingToMeasureIsAnError) {
  EXPECT_EQ(test::error_message([] { parse_memory_series("\n\n", "run.jsonl"); }),
            "run.jsonl: no plumb.train-events/1 lines (docs/train-events.md)");
  EXPECT_EQ(test::error_message([] {
              parse_memory_series(R"({"schema":"plumb.train-events/1","step":1,"step_seconds":1})"
                                  "\n", "run.jsonl");
            }),
            "run.jsonl: none of its 1 line(s) has memory.allocated_bytes: the memory baseline "
            "needs \"memory\": {\"allocated_bytes\": ...} on every step (docs/train-events.md)");
}

}  // namespace
}  // namespace plumb::mem
