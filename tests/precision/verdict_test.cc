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
  // A cosine msprobe does not compute (a single element: "Unsupported") fails no cosine test:
  // only max abs error > 1 fails.
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

Judgement msprobe_of(const std::vector<float>& a, const std::vector<float>& b) {
  return rule_named("msprobe").judge(compare_tensors(f32(a), f32(b)), DType::kFloat32, {});
}

Judgement assert_close_of(const std::vector<float>& a, const std::vector<float>& b) {
  return rule_named("assert-close").judge(compare_tensors(f32(a), f32(b)), DType::kFloat32, {});
}

constexpr float kNaN = __builtin_nanf("");
constexpr float kInf = __builtin_huge_valf();

// Issue 28: an all-zero output against a non-zero reference had cosine "n/a" and passed on its
// max abs error (msprobe's check_accuracy does so); so did the reverse.
TEST(Verdict, MsprobeAllZeroAgainstNonZeroFails) {
  const Judgement a_zero = msprobe_of({0, 0, 0}, {0.5f, 0.25f, 0});
  EXPECT_EQ(a_zero.verdict, Verdict::kFail);
  EXPECT_EQ(a_zero.why, "A is all zero and B is not: no cosine (max abs error 0.5)");
  EXPECT_EQ(msprobe_of({0.5f, 0.25f, 0}, {0, 0, 0}).why, "B is all zero and A is not: no cosine (max abs error 0.5)");
  EXPECT_EQ(msprobe_of({0.5f}, {0}).why, "B is all zero and A is not: no cosine (max abs error 0.5)");  // one element
  const Judgement both = msprobe_of({0, 0}, {0, 0});  // zeros agree: cosine 1
  EXPECT_EQ(both.verdict, Verdict::kPass);
  EXPECT_EQ(both.why, "");
  // assert_close keeps torch's rule: zeros against values within atol are close.
  EXPECT_EQ(assert_close_of({0, 0}, {1e-6f, 0}).verdict, Verdict::kPass);
}

// Issue 28: A = B × 1e-30 had its cosine underflow to "n/a" and passed. Its cosine is now 1, and
// the pair fails because A is zero at B's scale (msprobe's ε test, relative).
TEST(Verdict, MsprobeSideZeroAtTheOthersScaleFails) {
  const std::vector<float> ref = {0.5f, -0.25f, 0.125f, 0.75f};
  std::vector<float> tiny;
  for (float x : ref) tiny.push_back(x * 1e-30f);
  const Metrics m = compare_tensors(f32(tiny), f32(ref));
  EXPECT_NEAR(m.cosine, 1.0, 1e-12);
  const Judgement j = rule_named("msprobe").judge(m, DType::kFloat32, {});
  EXPECT_EQ(j.verdict, Verdict::kFail);
  EXPECT_EQ(j.why, "A is zero at B's scale: its L2 norm is 1e-30 of B's, not above msprobe's zero norm 2.22e-16 "
                   "(max abs error 0.75)");
  EXPECT_EQ(msprobe_of(ref, tiny).why, "B is zero at A's scale: its L2 norm is 1e-30 of A's, not above msprobe's "
                                       "zero norm 2.22e-16 (max abs error 0.75)");
  // 1e-15 of the other's norm is above ε: judged by msprobe's thresholds (cosine 1, error 0.75).
  std::vector<float> small;
  for (float x : ref) small.push_back(x * 1e-15f);
  EXPECT_EQ(msprobe_of(small, ref).verdict, Verdict::kPass);
}

// Issue 28: two all-NaN outputs passed with "cosine 1.000000". msprobe sets NaN/Inf at the same
// places to 0 (hence the cosine) and marks the row red (its NPU max or min is nan/inf).
TEST(Verdict, MsprobeNanOrInfInAFailsAndSaysWhy) {
  const Metrics nan = compare_tensors(f32({kNaN, kNaN, kNaN, kNaN}), f32({kNaN, kNaN, kNaN, kNaN}));
  EXPECT_EQ(nan.cosine, 1.0);  // the zeroed metrics, as msprobe computes them
  EXPECT_EQ(nan.max_abs_err, 0.0);
  const Judgement j = rule_named("msprobe").judge(nan, DType::kFloat32, {});
  EXPECT_EQ(j.verdict, Verdict::kFail);
  EXPECT_EQ(j.why, "A holds 4 NaN and 0 Inf, at the same places as B: msprobe sets them to 0 for the metrics and "
                   "marks the pair red (a NaN/Inf max or min in A)");
  EXPECT_EQ(msprobe_of({kInf, 1, 2}, {-kInf, 1, 2}).why,
            "A holds 0 NaN and 1 Inf, at the same places as B: msprobe sets them to 0 for the metrics and marks the "
            "pair red (a NaN/Inf max or min in A)");
  // At different places: every msprobe metric is N/A.
  EXPECT_EQ(msprobe_of({kNaN, 1, 2}, {0, 1, kInf}).why,
            "NaN or Inf at different places in A (1 NaN, 0 Inf) and B (0 NaN, 1 Inf): no msprobe metric is defined");
}

TEST(Verdict, AssertCloseSaysWhatItDidWithNanAndInf) {
  EXPECT_EQ(assert_close_of({kNaN, 1}, {kNaN, 1}).why,
            "1 of 2 elements not close (|a - b| > atol + rtol * |b|, rtol 1.3e-06, atol 1e-05); NaN is never close "
            "(equal_nan=False): 1 in A, 1 in B");
  const Judgement inf = assert_close_of({kInf, -kInf, 1}, {kInf, -kInf, 1});
  EXPECT_EQ(inf.verdict, Verdict::kPass);
  EXPECT_EQ(inf.why, "2 Inf in A equal to B's: close (torch.isclose)");
  EXPECT_EQ(assert_close_of({kInf, 1}, {-kInf, 1}).verdict, Verdict::kFail);
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
  // NaN or Inf in A's max or min on both sides: equal, yet msprobe marks A's row red (issue 28).
  // compare.cc sets a_overflow where the dump gives such a value (an absent one is NaN here too).
  StatDiffs nan = stat_diffs(stats(NAN, -1, NAN, NAN), stats(NAN, -1, NAN, NAN));
  EXPECT_EQ(judge(nan, {}).verdict, Verdict::kPass);  // absent summaries: nothing to judge
  nan.a_overflow = true;
  EXPECT_EQ(judge(nan, {}).why, "A's max nan and min -1, the same in B: msprobe marks a NaN/Inf max or min in A red");
  StatDiffs inf = stat_diffs(stats(HUGE_VAL, -HUGE_VAL, 0, HUGE_VAL), stats(HUGE_VAL, -HUGE_VAL, 0, HUGE_VAL));
  inf.a_overflow = true;
  EXPECT_EQ(judge(inf, {}).why, "A's max inf and min -inf, the same in B: msprobe marks a NaN/Inf max or min in A red");
  Thresholds t;
  t.stats_rel_fail = 0.2;
  EXPECT_EQ(judge(stat_diffs(stats(2, -1, 0.5, 5), stats(2, -2, 0, 4)), t).why, "L2 norm relative error 0.25 > 0.2");
  EXPECT_EQ(rule_named("assert-close").judge_stats, judge);
}

}  // namespace
}  // namespace plumb::precision
