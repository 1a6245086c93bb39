#include "serve/early_stop.h"

#include <gtest/gtest.h>

#include <cmath>

namespace plumb::serve {
namespace {

TEST(EarlyStop, BinomialCdfOfSmallCases) {
  EXPECT_DOUBLE_EQ(binomial_cdf(1, 2, 0.5), 0.75);
  EXPECT_DOUBLE_EQ(binomial_cdf(-1, 5, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(binomial_cdf(5, 5, 0.5), 1.0);
  EXPECT_NEAR(binomial_cdf(0, 458, 0.01), std::pow(0.99, 458), 1e-12);  // 0.0100212
}

// No miss at p99: 0.99^h < 0.01 first at h = 459 (0.99^458 = 0.010021, 0.99^459 = 0.009921).
TEST(EarlyStop, NoMissNeeds459RequestsAtP99) { EXPECT_EQ(min_passing(0), 459); }

// LoadGen's SingleStream log (mlcommons/inference tools/submission/.../Jetson-Thor_TRT/
// llama3.1-8b-edge/SingleStream/performance/run_1/mlperf_log_summary.txt): "Processed at least 64
// queries (10000). Would discard 929 highest latency queries. Early stopping 90.0th percentile
// estimate": h_min + 1 = 64 with t = 1, and t − 1 = 929 for 10,000 queries at p90.
TEST(EarlyStop, MatchesLoadGensPublishedP90Log) {
  EXPECT_EQ(min_passing(1, 0.90, 0.99) + 1, 64);
  EXPECT_EQ(max_passing_misses(10000, 0.90, 0.99) - 1, 929);
}

// One miss at p99: P(X ≤ 1) for X ~ B(h + 1, 0.01) falls under 1% first at h = 661 (662 in all).
TEST(EarlyStop, OneMissAtP99Needs662) {
  EXPECT_EQ(min_passing(1), 661);
  EXPECT_GE(binomial_cdf(1, 661, 0.01), 0.01);
  EXPECT_LT(binomial_cdf(1, 662, 0.01), 0.01);
}

TEST(EarlyStop, HoldsWhenEnoughRequestsAreGood) {
  const EarlyStop e = early_stop(500, 0);
  EXPECT_EQ(e.judgement, Judgement::holds);
  EXPECT_EQ(e.more_needed, 0);
}

TEST(EarlyStop, UndecidedSaysHowManyMoreWouldJudge) {
  const EarlyStop e = early_stop(100, 0);
  EXPECT_EQ(e.judgement, Judgement::undecided);
  EXPECT_EQ(e.more_needed, 359);  // 459 − 100
  const EarlyStop one = early_stop(500, 1);
  EXPECT_EQ(one.judgement, Judgement::undecided);
  EXPECT_EQ(one.more_needed, 162);  // 661 + 1 − 500
}

TEST(EarlyStop, FailsWhenMissesAreClearlyOverOnePercent) {
  EXPECT_EQ(early_stop(5, 5).judgement, Judgement::fails);
  EXPECT_EQ(early_stop(500, 50).judgement, Judgement::fails);
  // 5 of 500 is exactly 1%: neither holds nor fails.
  EXPECT_EQ(early_stop(500, 5).judgement, Judgement::undecided);
}

TEST(EarlyStop, MaxPassingMissesIsMinusOneBelowTheFewestThatPass) {
  EXPECT_EQ(max_passing_misses(458), -1);
  EXPECT_EQ(max_passing_misses(459), 0);
  EXPECT_EQ(max_passing_misses(662), 1);
}

TEST(EarlyStop, JudgementNames) {
  EXPECT_EQ(judgement_name(Judgement::holds), "holds");
  EXPECT_EQ(judgement_name(Judgement::fails), "fails");
  EXPECT_EQ(judgement_name(Judgement::undecided), "undecided");
}

}  // namespace
}  // namespace plumb::serve
