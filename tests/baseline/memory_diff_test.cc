// The memory parts' diff (baseline sets, issue 29 item 5) on hand-made memory baselines, with
// worked figures: the settled level against its noise, a leak in B where A was flat, two leaks
// compared by their intervals, the checkpoint check's pass → fail and a check missing in one.
#include "baseline/memory_diff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "mem/steps.h"

namespace plumb::baseline {
namespace {

constexpr double kMiB = 1024.0 * 1024;
constexpr double kGiB = 1024 * kMiB;
constexpr double kHalfWidth = 64 * 1024;  // every interval below: slope ± 64 KiB
constexpr size_t kFitted = 32;            // 30 degrees of freedom: t = 2.042

mem::RankMemory rank(const std::string& name, double settled, const std::string& verdict,
                     double slope = 100) {
  mem::RankMemory r;
  r.rank = name;
  r.steps = 40;
  r.warmup_steps = 8;
  r.settled_bytes = settled;
  r.verdict = verdict;
  r.creep.steps = verdict == "too few steps" ? 2 : kFitted;
  r.creep.verdict = verdict == "flat" ? "stable" : verdict;
  r.creep.slope_bytes_per_step = slope;
  r.creep.ci95_low = slope - kHalfWidth;
  r.creep.ci95_high = slope + kHalfWidth;
  r.checkpoint.verdict = "pass";
  return r;
}

mem::CheckpointCheck check(const std::string& verdict, const std::string& reason = "") {
  mem::CheckpointCheck c;
  c.rank = "0";
  c.verdict = verdict;
  c.reason = reason;
  return c;
}

mem::MemoryBaseline baseline(std::vector<mem::RankMemory> ranks,
                             mem::CheckpointCheck checkpoint = check("pass")) {
  mem::MemoryBaseline b;
  b.source = "events.jsonl";
  b.ranks = std::move(ranks);
  b.worst = 0;
  b.checkpoint = std::move(checkpoint);
  return b;
}

std::vector<std::string> texts(const MemoryDiff& d) {
  std::vector<std::string> out;
  for (const MemoryFinding& f : d.findings()) out.push_back(f.text);
  return out;
}

// Two flat ranks at 1 GiB each, the check passing, against the same: nothing to say, exit 0.
TEST(MemoryDiff, TheSameSetIsUnchanged) {
  const mem::MemoryBaseline a = baseline({rank("0", kGiB, "flat"), rank("1", kGiB, "flat")});
  const MemoryDiff d = memory_diff(a, a, 0.10);
  EXPECT_EQ(d.regressions(), 0);
  EXPECT_EQ(d.exit_code(), 0);
  EXPECT_TRUE(d.findings().empty());
  ASSERT_EQ(d.levels.size(), 2u);
  EXPECT_EQ(d.levels[0].change, 0);
  EXPECT_EQ(d.levels[0].verdict, Verdict::kSame);
}

// Rank 1 leaks 1 MiB per step in B (95% CI 960 KiB to 1088 KiB), flat in A: a regression naming
// the rank and its rate, exit 1.
TEST(MemoryDiff, ALeakInBWhereAWasFlatIsARegression) {
  const mem::MemoryBaseline a = baseline({rank("0", kGiB, "flat"), rank("1", kGiB, "flat")});
  const mem::MemoryBaseline b =
      baseline({rank("0", kGiB, "flat"), rank("1", kGiB, "leak", kMiB)});
  const MemoryDiff d = memory_diff(a, b, 0.10);
  EXPECT_EQ(d.regressions(), 1);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(d.creeps[1].verdict, Verdict::kRegression);
  EXPECT_EQ(texts(d), std::vector<std::string>({
                          "rank 1 leaks +1 MiB per step (95% CI +960 KiB to +1.1 MiB) in B, flat "
                          "in A"}));
  const nlohmann::json j = memory_diff_json(d);
  EXPECT_EQ(j["schema"], "plumb.memory-diff/1");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["creeps"][1]["verdict"], "regression");
  EXPECT_EQ(j["creeps"][1]["b_bytes_per_step"], kMiB);
  EXPECT_EQ(j["creeps"][1]["a_ci95_bytes_per_step"], nlohmann::json({100 - kHalfWidth, 100 + kHalfWidth}));
  EXPECT_EQ(j["findings"][0]["verdict"], "regression");
  // The other way round it is an improvement, exit 0.
  const MemoryDiff back = memory_diff(b, a, 0.10);
  EXPECT_EQ(back.exit_code(), 0);
  EXPECT_EQ(back.improvements(), 1);
  EXPECT_EQ(texts(back), std::vector<std::string>({
                             "rank 1 is flat in B, leaked +1 MiB per step (95% CI +960 KiB to "
                             "+1.1 MiB) in A"}));
}

// Settled level 1 GiB → 1.2 GiB: +20%, beyond the 10% threshold and the noise max(1% of 1 GiB,
// 16 MiB) / 1 GiB = 16 MiB / 1024 MiB = 1.5625%: a regression. 64 MiB → 76.8 MiB: +20% again,
// but the noise is 16 MiB / 64 MiB = 25%: too noisy to judge, exit 3.
TEST(MemoryDiff, WorkedExampleSettledLevel) {
  const MemoryDiff big = memory_diff(baseline({rank("0", kGiB, "flat")}),
                                     baseline({rank("0", 1288490189, "flat")}), 0.10);
  EXPECT_NEAR(big.levels[0].change, 0.2, 1e-9);
  EXPECT_DOUBLE_EQ(big.levels[0].noise, 0.015625);
  EXPECT_EQ(big.levels[0].verdict, Verdict::kRegression);
  EXPECT_EQ(big.exit_code(), 1);
  EXPECT_EQ(texts(big), std::vector<std::string>({"rank 0 settles higher: 1.2 GiB in B, 1 GiB in A (+20.0%)"}));
  const MemoryDiff small = memory_diff(baseline({rank("0", 64 * kMiB, "flat")}),
                                       baseline({rank("0", 80530637, "flat")}), 0.10);
  EXPECT_DOUBLE_EQ(small.levels[0].noise, 0.25);
  EXPECT_EQ(small.levels[0].verdict, Verdict::kTooNoisy);
  EXPECT_EQ(small.exit_code(), 3);
  EXPECT_EQ(texts(small), std::vector<std::string>({
                              "rank 0 settles: 76.8 MiB in B, 64 MiB in A (+20.0%, within the "
                              "level's noise of 25.0%)"}));
  // Within the threshold: the same, nothing said. Twice the level: a regression whatever the
  // noise (the 2× rule of every diff).
  EXPECT_EQ(memory_diff(baseline({rank("0", kGiB, "flat")}),
                        baseline({rank("0", 1.05 * kGiB, "flat")}), 0.10).exit_code(), 0);
  EXPECT_EQ(memory_diff(baseline({rank("0", 8 * kMiB, "flat")}),
                        baseline({rank("0", 16 * kMiB, "flat")}), 0.10).levels[0].verdict,
            Verdict::kRegression);
}

// Both leak, each interval ±64 KiB over 32 fitted steps: σ = 65536 / t(30) = 65536 / 2.042 =
// 32094.03 bytes per step each; noise = 3.5 × √2 × 32094.03 / 1 MiB = 158857.3 / 1048576 =
// 15.150%. B at 1.5 MiB (+50%): leaks faster, a regression; at 1.125 MiB (+12.5%): beyond the
// threshold, within the noise; at 1.0625 MiB (+6.25%): the same (named: both leak).
TEST(MemoryDiff, WorkedExampleTwoLeaksComparedByTheirIntervals) {
  ASSERT_DOUBLE_EQ(mem::t_quantile_95(kFitted - 2), 2.042);
  const mem::MemoryBaseline a = baseline({rank("0", kGiB, "leak", kMiB)});
  const MemoryDiff faster = memory_diff(a, baseline({rank("0", kGiB, "leak", 1.5 * kMiB)}), 0.10);
  EXPECT_NEAR(faster.creeps[0].noise, 0.151498, 1e-6);
  EXPECT_DOUBLE_EQ(faster.creeps[0].change, 0.5);
  EXPECT_EQ(faster.creeps[0].verdict, Verdict::kRegression);
  EXPECT_EQ(texts(faster), std::vector<std::string>({
                               "rank 0 leaks faster: +1.5 MiB per step (95% CI +1.4 MiB to +1.6 "
                               "MiB) in B, +1 MiB per step (95% CI +960 KiB to +1.1 MiB) in A "
                               "(+50.0%)"}));
  const MemoryDiff noisy = memory_diff(a, baseline({rank("0", kGiB, "leak", 1.125 * kMiB)}), 0.10);
  EXPECT_EQ(noisy.creeps[0].verdict, Verdict::kTooNoisy);
  EXPECT_EQ(noisy.exit_code(), 3);
  EXPECT_EQ(texts(noisy), std::vector<std::string>({
                              "rank 0 leaks +1.1 MiB per step (95% CI +1.1 MiB to +1.2 MiB) in B, "
                              "+1 MiB per step (95% CI +960 KiB to +1.1 MiB) in A (+12.5%, within "
                              "the intervals' noise)"}));
  const MemoryDiff same = memory_diff(a, baseline({rank("0", kGiB, "leak", 1.0625 * kMiB)}), 0.10);
  EXPECT_EQ(same.creeps[0].verdict, Verdict::kSame);
  EXPECT_EQ(same.exit_code(), 0);
  EXPECT_EQ(texts(same).size(), 1u);
  EXPECT_EQ(texts(same)[0].rfind("rank 0 leaks +1.1 MiB per step", 0), 0u) << texts(same)[0];
}

// The checkpoint check: pass → fail is a regression with B's reason; missing in B is named with
// its reason and not judged; too few steps in B is named, not judged.
TEST(MemoryDiff, TheCheckpointCheckAndWhatIsNotJudged) {
  const std::string why =
      "+100 MiB after the load against the level before the save, beyond the tolerance of 16 MiB";
  const mem::MemoryBaseline a = baseline({rank("0", kGiB, "flat")});
  const MemoryDiff failed = memory_diff(a, baseline({rank("0", kGiB, "flat")}, check("fail", why)), 0.10);
  EXPECT_EQ(failed.checkpoint.verdict, Verdict::kRegression);
  EXPECT_EQ(failed.exit_code(), 1);
  EXPECT_EQ(texts(failed), std::vector<std::string>({"checkpoint check fails in B (" + why + "), passed in A"}));
  const std::string none = "no line marks a checkpoint load (\"checkpoint\": \"loaded\")";
  const MemoryDiff missing =
      memory_diff(a, baseline({rank("0", kGiB, "too few steps")}, check("missing", none)), 0.10);
  EXPECT_EQ(missing.checkpoint.verdict, Verdict::kOnlyInA);
  EXPECT_EQ(missing.exit_code(), 0);
  EXPECT_EQ(texts(missing), std::vector<std::string>({
                                "rank 0: too few steps in B to judge its creep (flat in A)",
                                "checkpoint check missing in B (" + none + "): not judged (pass in A)"}));
}

// A rank only one set has is named, not judged.
TEST(MemoryDiff, ARankOnlyInOneIsNamed) {
  const MemoryDiff d = memory_diff(baseline({rank("0", kGiB, "flat")}),
                                   baseline({rank("0", kGiB, "flat"), rank("1", kGiB, "flat")}), 0.10);
  EXPECT_EQ(d.exit_code(), 0);
  ASSERT_EQ(d.levels.size(), 2u);
  EXPECT_EQ(d.levels[1].verdict, Verdict::kOnlyInB);
  EXPECT_EQ(d.creeps[1].verdict, Verdict::kOnlyInB);
  EXPECT_EQ(texts(d), std::vector<std::string>({"rank 1 only in B"}));
  EXPECT_EQ(d.ranks_a, 1);
  EXPECT_EQ(d.ranks_b, 2);
}

}  // namespace
}  // namespace plumb::baseline
