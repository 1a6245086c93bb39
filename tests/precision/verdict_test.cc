// The verdict rules on hand-made metrics at and around every threshold, their exact `why` texts,
// the statistics form with msprobe's differences, torch's tolerance table and the unknown rule's
// message.
#include "precision/verdict.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "common/error.h"
#include "support/subprocess.h"

namespace plumb::precision {
namespace {

Metrics metrics(double cosine, double max_abs_err, uint64_t elements = 100) {
  Metrics m;
  m.elements = elements;
  m.cosine = cosine;
  m.max_abs_err = max_abs_err;
  return m;
}

Judgement msprobe(const Metrics& m, const Thresholds& t = {}) {
  return rule_named("msprobe").judge(m, DType::kFloat32, t);
}

TEST(Verdict, Names) {
  EXPECT_EQ(verdict_name(Verdict::kPass), "pass");
  EXPECT_EQ(verdict_name(Verdict::kFail), "fail");
  EXPECT_EQ(verdict_name(Verdict::kUnmatched), "unmatched");
}

TEST(Verdict, RuleTable) {
  ASSERT_EQ(rules().size(), 2u);
  EXPECT_EQ(rules()[0].name, "msprobe");  // the default comes first
  EXPECT_EQ(rules()[1].name, "assert-close");
  EXPECT_EQ(&rule_named("assert-close"), &rules()[1]);
  EXPECT_EQ(test::error_message([] { rule_named("strict"); }),
            "unknown rule 'strict'; the rules are: msprobe, assert-close");
}

TEST(Verdict, MsprobeCosineWithAbsError) {
  const Judgement j = msprobe(metrics(0.95, 0.02));
  EXPECT_EQ(j.verdict, Verdict::kFail);
  EXPECT_EQ(j.why, "cosine 0.95 < 0.99 and max abs error 0.02 > 0.001");
  // A low cosine with a tiny error passes (msprobe: both conditions), as do the thresholds themselves.
  EXPECT_EQ(msprobe(metrics(0.95, 0.0005)).verdict, Verdict::kPass);
  EXPECT_EQ(msprobe(metrics(0.99, 0.02)).verdict, Verdict::kPass);
  EXPECT_EQ(msprobe(metrics(0.95, 0.001)).verdict, Verdict::kPass);
  EXPECT_TRUE(msprobe(metrics(0.95, 0.0005)).why.empty());
}

TEST(Verdict, MsprobeLowCosineOrLargeError) {
  EXPECT_EQ(msprobe(metrics(0.85, 0.0005)).why, "cosine 0.85 < 0.9");
  EXPECT_EQ(msprobe(metrics(0.999, 1.5)).why, "max abs error 1.5 > 1");
  EXPECT_EQ(msprobe(metrics(0.999, 1.0)).verdict, Verdict::kPass);
  EXPECT_EQ(msprobe(metrics(0.9, 0.0005)).verdict, Verdict::kPass);
}

TEST(Verdict, NumbersNeverRoundOntoTheThreshold) {
  EXPECT_EQ(msprobe(metrics(0.98999999, 0.5)).why, "cosine 0.98999999 < 0.99 and max abs error 0.5 > 0.001");
  EXPECT_EQ(msprobe(metrics(0.999, 1.0000001)).why, "max abs error 1.0000001 > 1");
}

TEST(Verdict, ThresholdsAreFlags) {
  Thresholds t;
  t.cosine_pass = 0.999;
  EXPECT_EQ(msprobe(metrics(0.995, 0.01), t).why, "cosine 0.995 < 0.999 and max abs error 0.01 > 0.001");
  t.max_abs_fail = 0.1;
  EXPECT_EQ(msprobe(metrics(0.9999, 0.2), t).why, "max abs error 0.2 > 0.1");
}

TEST(Verdict, MsprobeUndefinedCosineIsJudgedByItsError) {
  // msprobe's "Nan" cosine (one side all zero) fails no cosine test: only max abs error > 1 fails.
  EXPECT_EQ(msprobe(metrics(kUndefined, 0.5)).verdict, Verdict::kPass);
  EXPECT_EQ(msprobe(metrics(kUndefined, 2)).why, "max abs error 2 > 1");
  EXPECT_EQ(msprobe(metrics(kUndefined, 0.5, 1)).verdict, Verdict::kPass);  // a single element
}

TEST(Verdict, MsprobeNanMismatchFails) {
  Metrics m = metrics(kUndefined, kUndefined);
  m.nan_a = 1, m.inf_b = 2;
  const Judgement j = msprobe(m);
  EXPECT_EQ(j.verdict, Verdict::kFail);
  EXPECT_EQ(j.why, "NaN or Inf at different places in A (1 NaN, 0 Inf) and B (0 NaN, 2 Inf): no msprobe metric is defined");
  EXPECT_EQ(msprobe(metrics(kUndefined, kUndefined, 0)).verdict, Verdict::kPass);  // empty: nothing differs
}

Tensor f32(const std::vector<float>& v) {
  auto bytes = std::make_shared<std::vector<std::byte>>(v.size() * sizeof(float));
  std::memcpy(bytes->data(), v.data(), bytes->size());
  Tensor t;
  t.name = "t";
  t.shape = {static_cast<int64_t>(v.size())};
  t.data = bytes->data();
  t.owner = bytes;
  return t;
}

TEST(Verdict, AssertCloseOnComparedTensors) {
  // [1,2,3,4] against [1,2,3,5]: msprobe passes it (cosine 0.994, max abs error 1, not above 1);
  // assert_close does not: |4 − 5| > 1e-5 + 1.3e-6·5.
  const Metrics m = compare_tensors(f32({1, 2, 3, 4}), f32({1, 2, 3, 5}));
  EXPECT_EQ(rule_named("msprobe").judge(m, DType::kFloat32, {}).verdict, Verdict::kPass);
  const Judgement j = rule_named("assert-close").judge(m, DType::kFloat32, {});
  EXPECT_EQ(j.verdict, Verdict::kFail);
  EXPECT_EQ(j.why, "1 of 4 elements not close (|a - b| > atol + rtol * |b|, rtol 1.3e-06, atol 1e-05)");
  EXPECT_EQ(rule_named("assert-close").judge(compare_tensors(f32({1, 2}), f32({1, 2})), DType::kFloat32, {}).verdict,
            Verdict::kPass);
  Metrics complex = m;
  complex.elements = 2;
  EXPECT_EQ(rule_named("assert-close").judge(complex, DType::kComplex64, {}).why,
            "1 of 4 real components not close (|a - b| > atol + rtol * |b|, rtol 1.3e-06, atol 1e-05)");
}

TEST(Verdict, TorchTolerances) {
  EXPECT_EQ(assert_close_tolerances(DType::kFloat16), std::make_pair(0.001, 1e-5));
  EXPECT_EQ(assert_close_tolerances(DType::kBFloat16), std::make_pair(0.016, 1e-5));
  EXPECT_EQ(assert_close_tolerances(DType::kFloat32), std::make_pair(1.3e-6, 1e-5));
  EXPECT_EQ(assert_close_tolerances(DType::kFloat64), std::make_pair(1e-7, 1e-7));
  EXPECT_EQ(assert_close_tolerances(DType::kComplex64), std::make_pair(1.3e-6, 1e-5));
  EXPECT_EQ(assert_close_tolerances(DType::kComplex128), std::make_pair(1e-7, 1e-7));
  EXPECT_EQ(assert_close_tolerances(DType::kInt64), std::make_pair(0.0, 0.0));
  EXPECT_EQ(assert_close_tolerances(DType::kBool), std::make_pair(0.0, 0.0));
}

TensorStats stats(double max, double min, double mean, double l2norm) {
  TensorStats s;
  s.max = max, s.min = min, s.mean = mean, s.l2norm = l2norm;
  return s;
}

TEST(Verdict, StatDiffsFollowMsprobe) {
  const StatDiffs d = stat_diffs(stats(2, -1, 0.5, 10), stats(2, -2, 0, 4));
  EXPECT_EQ(d.max_diff, 0.0);  // equal: 0 and 0
  EXPECT_EQ(d.max_rel, 0.0);
  EXPECT_EQ(d.min_diff, 1.0);  // NPU − Bench
  EXPECT_EQ(d.min_rel, 0.5);   // |1 / −2|
  EXPECT_EQ(d.mean_diff, 0.5);
  EXPECT_EQ(d.mean_rel, HUGE_VAL);  // Bench 0
  EXPECT_EQ(d.norm_diff, 6.0);
  EXPECT_EQ(d.norm_rel, 1.5);
  const StatDiffs same = stat_diffs(stats(NAN, -HUGE_VAL, 1, 1), stats(NAN, -HUGE_VAL, 1, 1));
  EXPECT_EQ(same.max_diff, 0.0);  // both NaN, the same infinity: equal
  EXPECT_EQ(same.min_diff, 0.0);
}

TEST(Verdict, StatisticsJudge) {
  const auto judge = rule_named("msprobe").judge_stats;
  EXPECT_EQ(judge(stat_diffs(stats(2, -1, 0.5, 10), stats(2, -2, 0, 4)), {}).why, "L2 norm relative error 1.5 > 0.5");
  EXPECT_EQ(judge(stat_diffs(stats(2, -1, 0.5, 5), stats(2, -2, 0, 4)), {}).verdict, Verdict::kPass);  // 0.25
  EXPECT_EQ(judge(stat_diffs(stats(NAN, -1, 0.5, 4), stats(3, -1, 0.5, 4)), {}).why,
            "max: NaN or Inf on one side only (diff nan)");
  EXPECT_EQ(judge(stat_diffs(stats(2, -HUGE_VAL, 0.5, 4), stats(2, -1, 0.5, 4)), {}).why,
            "min: NaN or Inf on one side only (diff -inf)");
  Thresholds t;
  t.stats_rel_fail = 0.2;
  EXPECT_EQ(judge(stat_diffs(stats(2, -1, 0.5, 5), stats(2, -2, 0, 4)), t).why, "L2 norm relative error 0.25 > 0.2");
  EXPECT_EQ(rule_named("assert-close").judge_stats, judge);
}

}  // namespace
}  // namespace plumb::precision
