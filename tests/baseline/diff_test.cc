#include "baseline/diff.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "baseline/context_diff.h"
#include "baseline/validity.h"
#include "common/error.h"

namespace plumb::baseline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

comm::Row row(const std::string& group, uint64_t bytes, double busbw, double spread = kNaN) {
  comm::Row r;
  r.layer = "world";
  r.group = group;
  r.collective = "allreduce";
  r.dtype = "float32";
  r.requested_bytes = bytes;
  r.busbw_gbps = busbw;
  r.p50_us = 100;
  r.p99_us = 110;  // iteration spread 1 − 100/110 = 9.1%
  r.busbw_spread = spread;
  return r;
}

Record record(std::vector<comm::Row> rows) {
  Record r;
  r.rows = std::move(rows);
  return r;
}

// Worked example: 8 sizes, 3% MAD over rounds in both runs; every size moves by −1%..+1% but one.
// A size's noise is the larger of 3.5 × √(3%² + 3%²) = 14.85% and 3.5 × the scatter of the other
// sizes' changes.
TEST(Diff, VerdictsAgainstThresholdScatterAndNoise) {
  const double changes[] = {0.01, -0.01, 0.0, 0.01, -0.01, 0.0, 0.01, -0.30};
  Record a = record({});
  Record b = record({});
  for (int i = 0; i < 8; ++i) {
    a.rows.push_back(row("w", 1024ull << (2 * i), 10, 0.03));
    b.rows.push_back(row("w", 1024ull << (2 * i), 10 * (1 + changes[i]), 0.03));
  }
  b.rows.push_back(row("w", 1ull << 40, 5, 0.03));
  a.rows.push_back(row("w", 1ull << 41, 5, 0.03));
  const Diff d = diff(a, b, {0.10});
  ASSERT_EQ(d.rows.size(), 10u);
  auto sample_std = [&](int skip) {
    double mean = 0;
    for (int i = 0; i < 8; ++i) mean += i == skip ? 0 : changes[i] / 7;
    double squares = 0;
    for (int i = 0; i < 8; ++i) squares += i == skip ? 0 : (changes[i] - mean) * (changes[i] - mean);
    return std::sqrt(squares / 6);
  };
  EXPECT_EQ(d.rows[0].verdict, Verdict::kSame);
  EXPECT_NEAR(d.rows[0].noise, 3.5 * sample_std(0), 1e-9);  // the −30% of 16M among the others
  EXPECT_GT(d.rows[0].noise, 0.35);
  EXPECT_EQ(d.rows[7].verdict, Verdict::kRegression);  // −30% beyond 14.85% (> 3.5 × 0.9%)
  EXPECT_NEAR(d.rows[7].noise, 3.5 * std::sqrt(2 * 0.03 * 0.03), 1e-12);
  EXPECT_NEAR(d.rows[7].busbw_change, -0.30, 1e-12);
  EXPECT_EQ(d.rows[8].verdict, Verdict::kOnlyInB);
  EXPECT_EQ(d.rows[9].verdict, Verdict::kOnlyInA);
  EXPECT_EQ(d.row_regressions(), 1);
  // Over 1, 4 and 16 MiB: (0 + 1 − 30) / 3 = −9.67%, within the 10% threshold.
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_EQ(d.groups[0].sizes, 3);
  EXPECT_NEAR(d.groups[0].change, -0.29 / 3, 1e-12);
  EXPECT_EQ(d.groups[0].verdict, Verdict::kSame);
  EXPECT_EQ(d.regressions(), 0);  // a single size fails the comparison only with strict
  EXPECT_EQ(diff(a, b, {0.10, true}).regressions(), 1);
}

// −20% at each of 3 sizes with 5% MAD: each size's noise is 3.5 × 7.07% = 24.7% (noise), the
// mean's is 24.7% / √3 = 14.3%: the group is a regression.
TEST(Diff, AChangeEverySizeShowsIsARegressionOfTheGroup) {
  Record a = record({});
  Record b = record({});
  for (uint64_t mib : {1, 4, 16}) {
    a.rows.push_back(row("w", mib << 20, 10, 0.05));
    b.rows.push_back(row("w", mib << 20, 8, 0.05));
  }
  const Diff d = diff(a, b, {0.10});
  for (const RowDiff& r : d.rows) EXPECT_EQ(r.verdict, Verdict::kTooNoisy);
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_NEAR(d.groups[0].noise, 3.5 * std::sqrt(2 * 0.05 * 0.05) / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(d.groups[0].change, -0.2, 1e-12);
  EXPECT_EQ(d.groups[0].verdict, Verdict::kRegression);
  EXPECT_EQ(d.regressions(), 1);
}

// A size whose rounds agreed by chance is as noisy as the run's median size.
TEST(Diff, NoSizeIsQuieterThanTheRunsMedianSize) {
  const Record a = record({row("w", 1024, 10, 0.0), row("w", 2048, 10, 0.04), row("w", 4096, 10, 0.08)});
  const Diff d = diff(a, a);
  EXPECT_NEAR(d.rows[0].noise, 3.5 * std::sqrt(2 * 0.04 * 0.04), 1e-12);
  EXPECT_NEAR(d.rows[2].noise, 3.5 * std::sqrt(2 * 0.08 * 0.08), 1e-12);
}

// One round: σ is the runs' iteration spread 1 − p50/p99 = 9.1% each: noise 3.5 × √2 × 9.1%.
TEST(Diff, OneRoundFallsBackToTheIterationSpread) {
  const Diff d = diff(record({row("w", 1 << 20, 10)}), record({row("w", 1 << 20, 8.5)}));
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_NEAR(d.rows[0].noise, 3.5 * std::sqrt(2.0) * (1 - 100.0 / 110.0), 1e-12);
  EXPECT_EQ(d.rows[0].verdict, Verdict::kTooNoisy);  // −15% < 45%
}

// Imported logs have no spread at all: only the threshold judges.
TEST(Diff, ImportedRowsAreJudgedByTheThresholdAlone) {
  comm::Row a = row("w", 1 << 20, 10);
  comm::Row b = row("w", 1 << 20, 8.5);
  for (comm::Row* r : {&a, &b}) r->p50_us = r->p99_us = kNaN;
  const Diff d = diff(record({a}), record({b}));
  EXPECT_EQ(d.rows[0].noise, 0);
  EXPECT_EQ(d.rows[0].verdict, Verdict::kRegression);
  EXPECT_TRUE(std::isnan(d.rows[0].p99_change));
}

// Several groups of a layer: the slowest one is compared (lowest busbw, highest p99).
TEST(Diff, ComparesTheSlowestGroup) {
  comm::Row fast = row("rack0", 1 << 20, 20);
  comm::Row slow = row("rack1", 1 << 20, 10);
  slow.p99_us = 500;
  const Diff d = diff(record({fast, slow}), record({row("rack0", 1 << 20, 19)}));
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].busbw_a, 10);
  EXPECT_EQ(d.rows[0].p99_a, 500);
  EXPECT_NEAR(d.rows[0].busbw_change, 0.9, 1e-12);
}

TEST(Diff, OneVariableNoWarningTwoVariablesWarn) {
  Record a = record({row("w", 1 << 20, 10)});
  Record b = record({row("w", 1 << 20, 10)});
  a.env = {{"versions", {{"nccl", "2.21.5"}, {"cuda", "12.4"}}}, {"env", {{"NCCL_ALGO", "Ring"}}}};
  b.env = {{"versions", {{"nccl", "2.23.4"}, {"cuda", "12.4"}}}, {"env", {{"NCCL_ALGO", "Ring"}}}};
  Diff d = diff(a, b);
  ASSERT_EQ(d.variables.size(), 1u);
  EXPECT_EQ(d.variables[0].kind, "version");
  EXPECT_EQ(d.variables[0].name, "nccl");
  EXPECT_EQ(d.variables[0].a, "2.21.5");
  EXPECT_EQ(d.variables[0].b, "2.23.4");
  EXPECT_EQ(d.attribution_warning(), "");

  b.env["env"]["NCCL_ALGO"] = "Tree";
  b.hosts = {"node7"};
  d = diff(a, b);
  ASSERT_EQ(d.variables.size(), 3u);
  EXPECT_EQ(d.attribution_warning(),
            "3 variables differ (topology hosts, version nccl, setting NCCL_ALGO): a change in the "
            "results cannot be attributed to one of them; rerun with only one of them changed");
}

TEST(Diff, AbsentValuesAndSweepSettings) {
  Record a = record({});
  Record b = record({});
  a.env = {{"env", nlohmann::json::object()}};
  b.env = {{"env", {{"HCCL_BUFFSIZE", "400"}}}};
  a.comm = {{"backend", "mpi"}, {"settings", {{"iters", 20}, {"min_bytes", 8}}}};
  b.comm = {{"backend", "mpi"}, {"settings", {{"iters", 50}, {"min_bytes", 1024}}}};
  const std::vector<VariableDiff> v = context_diffs(a, b);
  ASSERT_EQ(v.size(), 2u);  // min_bytes changes the coverage, not the results
  EXPECT_EQ(v[0].name, "HCCL_BUFFSIZE");
  EXPECT_EQ(v[0].a, "(absent)");
  EXPECT_EQ(v[1].name, "sweep.iters");
  EXPECT_EQ(v[1].b, "50");
}

TEST(Diff, ManyTopologyFieldsFoldIntoOne) {
  Record a = record({});
  Record b = record({});
  for (int i = 0; i < 20; ++i) {
    a.topo["ranks"][i]["cpus"] = "0-63";
    b.topo["ranks"][i]["cpus"] = std::to_string(i);
  }
  const std::vector<VariableDiff> v = context_diffs(a, b);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, "20 fields");
  EXPECT_EQ(v[0].a, "first: topo.ranks[0].cpus = 0-63");
}

TEST(Diff, JsonCarriesRowsVariablesAndVerdict) {
  const Diff d = diff(record({row("w", 1 << 20, 10, 0.01)}), record({row("w", 1 << 20, 5, 0.01)}));
  const nlohmann::json j = diff_json(d);
  EXPECT_EQ(j["schema"], "plumb.diff/1");
  EXPECT_EQ(j["regressions"], 1);  // the group over sizes ≥ 1 MiB
  EXPECT_EQ(j["size_regressions"], 1);
  EXPECT_EQ(j["groups"][0]["verdict"], "regression");
  EXPECT_EQ(j["rows"][0]["verdict"], "regression");
  EXPECT_DOUBLE_EQ(j["rows"][0]["busbw_change"].get<double>(), -0.5);
  EXPECT_TRUE(j["rows"][0]["p99_change"].is_number());
  EXPECT_TRUE(j["warning"].is_null());
}

// Rows of 1, 4 and 16 MiB, B's busbw `factor` × A's, both with MAD `spread` over rounds (NaN: one
// round) and iteration percentiles p50/p99.
std::pair<Record, Record> scaled(double factor, double spread, double p50 = 100, double p99 = 110) {
  Record a = record({});
  Record b = record({});
  for (uint64_t mib : {1, 4, 16}) {
    a.rows.push_back(row("w", mib << 20, 10, spread));
    b.rows.push_back(row("w", mib << 20, 10 * factor, spread));
  }
  for (Record* r : {&a, &b}) {
    for (comm::Row& row : r->rows) {
      row.p50_us = p50;
      row.p99_us = p99;
    }
  }
  return {a, b};
}

// The issue's first case: one round, p50/p99 = 0.6, σ = 40% per run, noise 3.5 × √2 × 40% = 198%
// per size and 198% / √3 = 114% for the mean. Busbw ÷10 (−90%) is within both, but B/A = 0.1 is
// beyond the 2× bound: a regression whatever the noise.
TEST(Diff, ATenfoldLossIsARegressionWhateverTheOneRoundNoise) {
  const auto [a, b] = scaled(0.1, kNaN, 60, 100);
  const Diff d = diff(a, b);
  ASSERT_EQ(d.rows.size(), 3u);
  for (const RowDiff& r : d.rows) {
    EXPECT_NEAR(r.noise, 3.5 * std::sqrt(2.0) * 0.4, 1e-12);
    EXPECT_NEAR(r.busbw_change, -0.9, 1e-12);
    EXPECT_EQ(r.verdict, Verdict::kRegression);
  }
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_NEAR(d.groups[0].noise, 3.5 * std::sqrt(2.0) * 0.4 / std::sqrt(3.0), 1e-12);
  EXPECT_GT(d.groups[0].noise, 0.9);
  EXPECT_EQ(d.groups[0].verdict, Verdict::kRegression);
  EXPECT_EQ(d.regressions(), 1);
  EXPECT_EQ(d.exit_code(), 1);
}

// The issue's second case: 3 rounds, MAD 20.6% per run, noise 3.5 × √2 × 20.6% = 102% per size
// and 102% / √3 = 58.9% for the mean. Busbw ÷2 (−50%) is within both, and B/A = 0.5: a regression.
TEST(Diff, AHalvingIsARegressionWhateverTheRoundsNoise) {
  const double spread = 1.02 / (3.5 * std::sqrt(2.0));
  const auto [a, b] = scaled(0.5, spread);
  const Diff d = diff(a, b);
  for (const RowDiff& r : d.rows) {
    EXPECT_NEAR(r.noise, 1.02, 1e-12);
    EXPECT_EQ(r.verdict, Verdict::kRegression);
  }
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_NEAR(d.groups[0].noise, 1.02 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(d.groups[0].change, -0.5, 1e-15);
  EXPECT_EQ(d.groups[0].verdict, Verdict::kRegression);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(d.too_noisy_advice(), "");
}

// The bound is B/A ≤ 0.5 × 1.001: a halving rounded to 3 digits (6.175 → 6.18 of 12.35, 0.5004)
// counts; 0.501 is within the noise above.
TEST(Diff, TheHalvingBoundAllowsRoundingToThreeDigits) {
  const double spread = 1.02 / (3.5 * std::sqrt(2.0));
  EXPECT_EQ(diff(scaled(6.18 / 12.35, spread).first, scaled(6.18 / 12.35, spread).second)
                .groups[0].verdict, Verdict::kRegression);
  EXPECT_EQ(diff(scaled(0.501, spread).first, scaled(0.501, spread).second).groups[0].verdict,
            Verdict::kTooNoisy);
  // A doubling is an improvement whatever the noise, and never fails the gate.
  const Diff up = diff(scaled(2, spread).first, scaled(2, spread).second);
  EXPECT_EQ(up.groups[0].verdict, Verdict::kImprovement);
  EXPECT_EQ(up.exit_code(), 0);
}

// 3 rounds, MAD 12.1% per run: noise 60% per size, 60% / √3 = 34.6% for the mean. −30% is beyond
// the 10% threshold, within the noise and short of 2×: too noisy to judge, exit 3. The noise falls
// as 1.858 / √k per MAD beyond 3 rounds: (1.858 / (30% / 34.6%))² = 4.6, so 5 rounds.
TEST(Diff, AThirtyPercentDropWithinSixtyPercentNoiseIsTooNoisyToJudge) {
  const double spread = 0.6 / (3.5 * std::sqrt(2.0));
  const auto [a, b] = scaled(0.7, spread);
  const Diff d = diff(a, b);
  for (const RowDiff& r : d.rows) EXPECT_EQ(r.verdict, Verdict::kTooNoisy);
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_NEAR(d.groups[0].noise, 0.6 / std::sqrt(3.0), 1e-12);
  EXPECT_EQ(d.groups[0].verdict, Verdict::kTooNoisy);
  EXPECT_EQ(d.regressions(), 0);
  EXPECT_EQ(d.too_noisy(), 1);
  EXPECT_EQ(d.exit_code(), 3);
  EXPECT_EQ(kTooNoisyExitCode, 3);
  EXPECT_EQ(d.too_noisy_advice(),
            "to judge them, measure A and B with more rounds: the noise falls about as 1/√rounds, "
            "so about 5 rounds (plumb baseline --rounds 5, plumb comm --rounds 5) bring the noise "
            "of 35% under the change of -30.0%; more iterations per size (--iters, -n) steady "
            "each round");
  const nlohmann::json j = diff_json(d);
  EXPECT_EQ(j["groups"][0]["verdict"], "too noisy to judge");
  EXPECT_EQ(j["too_noisy"], 1);
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["advice"], d.too_noisy_advice());
}

// The same runs measured in 5 rounds: σ = 1.858 / √5 = 0.831 MAD, noise 34.6% × 0.831 = 28.8%,
// and the −30% is a regression.
TEST(Diff, MoreRoundsShrinkTheNoise) {
  auto [a, b] = scaled(0.7, 0.6 / (3.5 * std::sqrt(2.0)));
  for (Record* r : {&a, &b}) r->comm = {{"settings", {{"rounds", 5}}}};
  const Diff d = diff(a, b);
  EXPECT_EQ(d.a.rounds, 5);
  EXPECT_NEAR(d.groups[0].noise, 0.6 / std::sqrt(3.0) * 1.8581 / std::sqrt(5.0), 1e-12);
  EXPECT_EQ(d.groups[0].verdict, Verdict::kRegression);
}

// One round: more rounds, not more iterations, make it judgeable.
TEST(Diff, OneRoundTooNoisyAdvisesRounds) {
  const auto [a, b] = scaled(0.7, kNaN, 60, 100);
  const Diff d = diff(a, b);
  EXPECT_EQ(d.a.rounds, 1);
  EXPECT_EQ(d.exit_code(), 3);
  EXPECT_EQ(d.too_noisy_advice(),
            "to judge them, measure A and B in rounds (plumb baseline --rounds 5, plumb comm "
            "--rounds 5): one round's noise is the spread of its iterations, 1 − p50/p99, which "
            "more iterations (--iters, -n) do not shrink");
}

// A sweep of small sizes only is judged over all of them: ÷10 at 1, 4 and 16 KiB fails the gate.
TEST(Diff, WithoutSizesOfAMebibyteTheGroupAveragesAllSizes) {
  Record a = record({});
  Record b = record({});
  for (uint64_t kib : {1, 4, 16}) {
    a.rows.push_back(row("w", kib << 10, 1, 0.5));
    b.rows.push_back(row("w", kib << 10, 0.1, 0.5));
  }
  const Diff d = diff(a, b);
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_EQ(d.groups[0].min_bytes, 1024u);
  EXPECT_EQ(d.groups[0].sizes, 3);
  EXPECT_EQ(d.groups[0].verdict, Verdict::kRegression);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(diff_json(d)["groups"][0]["min_bytes"], 1024);
}

TEST(Diff, ARunThatMeasuredNothingIsAnError) {
  const Record a = record({row("w", 1 << 20, 10)});
  try {
    diff(a, record({}), {0.10, false, "file a.json", "file b.json"});
    FAIL() << "an empty B was compared";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_STREQ(e.what(), "B (file b.json) measured nothing: its results list is empty; expected "
                           "the rows of a plumb comm or plumb baseline run to compare");
  }
  Record empty = record({});
  empty.id = 3;
  try {
    diff(empty, a);
    FAIL() << "an empty A was compared";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "A (baseline 3) measured nothing: its results list is empty; expected "
                           "the rows of a plumb comm or plumb baseline run to compare");
  }
}

TEST(Diff, RunsThatShareNoMeasurementAreAnError) {
  Record a = record({row("w", 1 << 10, 10), row("w", 16 << 20, 10)});
  Record b = record({row("w", 2 << 10, 10)});
  b.rows[0].collective = "allgather";
  b.source = "plumb comm b.json";
  try {
    diff(a, b, {0.10, false, "file a.json"});
    FAIL() << "disjoint runs were compared";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_STREQ(e.what(), "A (file a.json) and B (plumb comm b.json) share no measurement: A has "
                           "allreduce@world float32 1 KiB..16 MiB; B has allgather@world float32 "
                           "2 KiB; expected the same (layer, collective, dtype, size) in both");
  }
}

// Issue 28: -t 100 does not switch the 2× rule off; a rise of time to twice or more is one too.
TEST(Diff, AHalvingIsARegressionWhateverTheThreshold) {
  const auto [a, b] = scaled(0.5, 0.01);
  const Diff d = diff(a, b, {1.0});
  for (const RowDiff& r : d.rows) EXPECT_EQ(r.verdict, Verdict::kRegression);
  EXPECT_EQ(d.groups[0].verdict, Verdict::kRegression);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(diff(a, scaled(0.6, 0.01).second, {1.0}).exit_code(), 0);  // −40% is within 100%
  EXPECT_EQ(judge_change(-0.5, 0, 1.0), Verdict::kRegression);
  EXPECT_EQ(judge_change(1.0, 0, 1.0), Verdict::kImprovement);
  EXPECT_EQ(judge_time_change(1.0, 0, 1.0), Verdict::kRegression);  // time ×2 = busbw ÷2
  EXPECT_EQ(judge_time_change(0.5, 0, 1.0), Verdict::kSame);
}

// Imported rows (no spread) of 1 MiB..16 GiB (×4) where every size ≥ 1 GiB lost 50%: the group's
// mean (−18.75%) is within the scatter of its sizes' changes, but a halved bandwidth-bound size is
// a regression whatever the noise (the issue's "too noisy to judge").
TEST(Diff, EverySizeOfAGibibyteHalvedIsARegressionNotNoise) {
  Record a = record({});
  Record b = record({});
  for (uint64_t bytes = 1 << 20; bytes <= (16ull << 30); bytes *= 4) {
    comm::Row ra = row("w", bytes, 10);
    comm::Row rb = row("w", bytes, bytes >= (1ull << 30) ? 5 : 10);
    for (comm::Row* r : {&ra, &rb}) r->p50_us = r->p99_us = kNaN;
    a.rows.push_back(ra);
    b.rows.push_back(rb);
  }
  const Diff d = diff(a, b);
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_NEAR(d.groups[0].change, -1.5 / 8, 1e-12);
  EXPECT_GT(d.groups[0].noise, 0.1875);  // the mean alone would be too noisy to judge
  EXPECT_EQ(d.groups[0].halved, 3);
  EXPECT_EQ(d.groups[0].verdict, Verdict::kRegression);
  EXPECT_EQ(d.outcome(), Outcome::kRegression);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(diff_json(d)["groups"][0]["halved"], 3);
  // At small sizes a halving alone stays a size's verdict (1.9× was measured there unchanged).
  Record small_a = record({});
  Record small_b = record({});
  for (uint64_t kib : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512}) {
    small_a.rows.push_back(row("w", kib << 10, 1, 0.05));
    small_b.rows.push_back(row("w", kib << 10, kib == 4 ? 0.5 : 1, 0.05));
  }
  const Diff small = diff(small_a, small_b);
  EXPECT_EQ(small.groups[0].halved, 0);
  EXPECT_EQ(small.row_regressions(), 1);
  EXPECT_EQ(small.exit_code(), 0);
}

// Imported logs have no rounds: the advice is more logs of the same test, not --rounds.
std::pair<Record, Record> imported(std::pair<Record, Record> runs, int logs) {
  for (Record* r : {&runs.first, &runs.second}) {
    r->comm = {{"imported", {{"file", "x.log"}, {"line", 1}}}};
    if (logs > 1) r->comm["settings"] = {{"rounds", logs}};
    for (comm::Row& row : r->rows) row.p50_us = row.p99_us = kNaN;
  }
  return runs;
}

TEST(Diff, TooNoisyAdviceForImportedLogs) {
  Record a = record({});
  Record b = record({});
  const double changes[] = {-0.4, 0.05, -0.05};
  for (int i = 0; i < 3; ++i) {
    a.rows.push_back(row("w", (1ull << 20) << (2 * i), 10));
    b.rows.push_back(row("w", (1ull << 20) << (2 * i), 10 * (1 + changes[i])));
  }
  const auto [ia, ib] = imported({a, b}, 1);
  const Diff d = diff(ia, ib);
  ASSERT_EQ(d.exit_code(), 3);
  EXPECT_TRUE(d.a.imported);
  EXPECT_EQ(d.too_noisy_advice(),
            "to judge them, import several logs of the same test as one record, for A and for B "
            "(plumb import run1.log run2.log run3.log: each size keeps the logs' median and their "
            "spread, as the rounds of plumb's own runs): one log has no spread of its own, and the "
            "scatter of its sizes' changes is this large");
  // One of them a plumb run of one round.
  const Diff mixed = diff(ia, [&] {
    Record r = b;
    r.comm = nlohmann::json::object();
    return r;
  }());
  EXPECT_EQ(mixed.too_noisy_advice(),
            "to judge them, import several logs of the same test as one record, for A and for B "
            "(plumb import run1.log run2.log run3.log: each size keeps the logs' median and their "
            "spread, as the rounds of plumb's own runs): one log has no spread of its own, and the "
            "scatter of its sizes' changes is this large; measure the plumb run in rounds too "
            "(plumb baseline --rounds 5, plumb comm --rounds 5)");
  // Three logs per record (their spread as rounds'): how many logs would judge it.
  const auto [la, lb] = imported(scaled(0.7, 0.6 / (3.5 * std::sqrt(2.0))), 3);
  const Diff logs = diff(la, lb);
  EXPECT_EQ(logs.a.rounds, 3);
  EXPECT_EQ(logs.too_noisy_advice(),
            "to judge them, import more logs of the same test per record: the noise falls about "
            "as 1/√logs, so about 5 logs bring the noise of 35% under the change of -30.0% (plumb "
            "import with that many logs)");
}

// Issue 28: a spread that is negative, not finite or absurd never reaches the noise model (it
// gave "about −2147483647 rounds"): refused naming the record, the result and the field.
TEST(Diff, AbsurdSpreadsAreRefused) {
  for (const double spread : {-5.0, 1e300, std::numeric_limits<double>::infinity()}) {
    auto [a, b] = scaled(0.7, 0.05);
    b.rows[1].busbw_spread = spread;
    try {
      diff(a, b, {0.10, false, "file a.json", "file b.json"});
      FAIL() << spread;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_EQ(std::string(e.what()),
                fmt::format("B (file b.json): result 1 (allreduce@world 4 MiB): busbw_spread: "
                            "expected a relative spread from 0 to 1000 (the rounds' median "
                            "absolute deviation over their median; none when measured once), got "
                            "{}",
                            spread));
    }
  }
}

// Records carry their validity; diff never passes a broken one (docs/diff.md).
TEST(Diff, WrongResultsInBFailWhateverTheBandwidth) {
  auto [a, b] = scaled(1.0, 0.01);
  b.rows[2].wrong = 30;
  const Diff d = diff(a, b);
  EXPECT_EQ(d.regressions(), 0);
  EXPECT_EQ(d.outcome(), Outcome::kWrongResults);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(d.b.validity.marks, (std::vector<std::string>{"WRONG RESULTS"}));
  const nlohmann::json j = diff_json(d);
  EXPECT_EQ(j["outcome"], "wrong results");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["b"]["validity"]["issues"][0],
            "wrong results: 1 of 3 rows have wrong elements (30 in all), the first at "
            "allreduce@world 16 MiB");
  // The same in A: it is no reference (exit 2); B's failed check is a failure (exit 1).
  EXPECT_EQ(diff(b, a).outcome(), Outcome::kBadReference);
  EXPECT_EQ(diff(b, a).exit_code(), 2);
  Record failed = a;
  failed.validity.push_back({IssueKind::kFailedCheck, "b.log:31", "nccl-tests says 'x'", 0, 0, {}, 0});
  EXPECT_EQ(diff(a, failed).outcome(), Outcome::kFailedCheck);
  EXPECT_EQ(diff(a, failed).exit_code(), 1);
}

TEST(Diff, AnIncompleteSweepIsNeverAPass) {
  auto [a, b] = scaled(1.0, 0.01);
  b.validity.push_back(incomplete_sweep("b.log:22", "the test ends without its summary",
                                        SweepPlan{1 << 20, 64 << 20, 4, 0}, 3, 16 << 20));
  const Diff d = diff(a, b);
  EXPECT_EQ(d.outcome(), Outcome::kIncomplete);
  EXPECT_EQ(d.exit_code(), 2);
  EXPECT_EQ(d.b.validity.marks,
            (std::vector<std::string>{"INCOMPLETE: sweep ended at 16 MiB of 64 MiB"}));
  EXPECT_EQ(d.b.validity.lines,
            (std::vector<std::string>{"b.log:22: incomplete: the test ends without its summary: "
                                      "the sweep ended at 16 MiB of 64 MiB; missing 64 MiB"}));
  EXPECT_EQ(diff(b, a).exit_code(), 2);  // in A as well
  // A regression in what both measured still fails: 1 wins over 2.
  Record slower = scaled(0.5, 0.01).second;
  slower.validity = b.validity;
  EXPECT_EQ(diff(a, slower).outcome(), Outcome::kRegression);
  EXPECT_EQ(diff(a, slower).exit_code(), 1);
}

// OSU prints no end marker and no planned last size: an OSU log that stopped between two rows
// is incomplete beside a record that went on to larger sizes (docs/import.md).
TEST(Diff, AnOsuLogThatStopsShortOfTheOtherRecordIsIncomplete) {
  auto [a, b] = scaled(1.0, 0.01);
  b.rows.pop_back();  // 1 and 4 MiB: the run died before 16 MiB
  b.source = "osu.log:1 (OSU v7.1)";
  b.comm = {{"backend", "osu"}, {"imported", {{"file", "osu.log"}, {"line", 1}}}};
  const Diff d = diff(a, b, {0.10, false, "baseline 1", "baseline 2"});
  EXPECT_EQ(d.outcome(), Outcome::kIncomplete);
  EXPECT_EQ(d.exit_code(), 2);
  EXPECT_EQ(d.b.validity.marks,
            (std::vector<std::string>{"INCOMPLETE: sweep ended at 4 MiB of 16 MiB"}));
  EXPECT_EQ(d.b.validity.lines,
            (std::vector<std::string>{"osu.log:1 (OSU v7.1): incomplete: an OSU log prints no "
                                      "planned last size, and A (baseline 1) went on to 16 MiB: "
                                      "the sweep ended at 4 MiB of 16 MiB; missing 16 MiB"}));
  EXPECT_TRUE(d.a.validity.valid());
  // As A, likewise; an OSU log that reached the other's last size is complete.
  EXPECT_EQ(diff(b, a).outcome(), Outcome::kIncomplete);
  Record whole = a;
  whole.comm = b.comm;
  EXPECT_EQ(diff(a, whole).outcome(), Outcome::kNoRegression);
  // Another importer's log says itself whether it ended: its sizes are only compared.
  b.comm["backend"] = "nccl-tests";
  EXPECT_EQ(diff(a, b).outcome(), Outcome::kNoRegression);
}

}  // namespace
}  // namespace plumb::baseline
