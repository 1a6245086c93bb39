#include "plan/reliability.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"

namespace plumb::plan {
namespace {

// Llama 3 405B (Dubey et al. 2024, Section 3.3.4): 419 interruptions in 54 days on 16,384 GPUs.
// 16,384 · 54 · 24 = 21,233,664 GPU-hours; 419 / 21,233,664 = 1.97328e-5 per GPU-hour. The job's
// MTBF is then 54 · 24 / 419 = 1296 / 419 = 3.09308 h. Tolerances: half a unit of the last digit
// written here.
TEST(Reliability, Llama3FailureRateAndJobMtbf) {
  EXPECT_NEAR(kLlama3FailuresPerDeviceHour, 1.97328e-5, 5e-11);
  EXPECT_NEAR(job_mtbf_hours(kLlama3FailuresPerDeviceHour, 16384), 3.09308, 5e-6);
  EXPECT_DOUBLE_EQ(job_mtbf_hours(kLlama3FailuresPerDeviceHour, 16384), 1296.0 / 419);
}

// A device MTBF of 50,000 h is 2e-5 failures per hour; 1,000 such devices fail every 50 h.
TEST(Reliability, MtbfOfManyDevices) {
  EXPECT_DOUBLE_EQ(failure_rate_from_mtbf(50000), 2e-5);
  EXPECT_DOUBLE_EQ(job_mtbf_hours(failure_rate_from_mtbf(50000), 1000), 50);
}

// C = 60 s, M = 3 h = 10,800 s: sqrt(2 · 60 · 10,800) = sqrt(1,296,000) = 36 · sqrt(1000)
// = 1138.420 s (≈ 19 min).
TEST(Reliability, YoungInterval) {
  EXPECT_NEAR(young_interval(60, 10800), 1138.420, 5e-4);
  EXPECT_DOUBLE_EQ(young_interval(60, 10800), 36 * std::sqrt(1000.0));
}

// δ = 60 s, M = 10,800 s: δ/(2M) = 1/360; sqrt(1/360) / 3 = 0.0175682, (1/360) / 9 = 0.0003086;
// 1138.420 · 1.0178768 − 60 = 1158.771 − 60 = 1098.771 s. Tolerance: the rounding of the
// hand-computed factors, ±1e-3 s.
TEST(Reliability, DalyInterval) { EXPECT_NEAR(daly_interval(60, 10800), 1098.771, 1e-3); }

// Daly 2006, Figs. 3–5 (R = 10 min, δ = 5 min): the model predicts τ = 117 min for M = 24 h,
// 57 min for M = 6 h and 9.1 min for M = 15 min. By hand for M = 6 h = 360 min:
// δ/(2M) = 5/720; sqrt(2 · 5 · 360) = 60; 60 · (1 + 0.083333/3 + 0.006944/9) − 5 = 56.71.
// Tolerance: half a unit of the digits the paper prints.
TEST(Reliability, DalyIntervalAsTheDalyPaper) {
  EXPECT_NEAR(daly_interval(5, 24 * 60), 117, 0.5);
  EXPECT_NEAR(daly_interval(5, 6 * 60), 57, 0.5);
  EXPECT_NEAR(daly_interval(5, 15), 9.1, 0.05);
}

// Checkpoints at least twice as long as the MTBF: Daly's τ = M.
TEST(Reliability, DalyIntervalOfSlowCheckpointsIsTheMtbf) {
  EXPECT_DOUBLE_EQ(daly_interval(7200, 3600), 3600);
  EXPECT_DOUBLE_EQ(daly_interval(10000, 3600), 3600);
}

// For δ ≪ M, Daly − Young = sqrt(2δM) · [(1/3)·sqrt(δ/(2M)) + (1/9)·δ/(2M)] − δ = δ/3 − δ + ε
// = −2δ/3 + ε with ε = sqrt(2δM) · δ/(18M): δ = 1, M = 1e6: ε = 1414.2 / 1.8e7 = 7.9e-5. The
// relative gap 1 − Daly/Young = (2/3)·sqrt(x) − x/9, x = δ/(2M), shrinks about tenfold when δ/M
// shrinks a hundredfold: x = 5e-5: 4.7140e-3 − 0.0056e-3 = 4.7085e-3; x = 5e-7: 4.7140e-4
// − 0.0006e-4 = 4.7135e-4. Tolerances: half a unit of the last digit written here.
TEST(Reliability, DalyApproachesYoungForShortCheckpoints) {
  const double young = young_interval(1, 1e6);
  const double daly = daly_interval(1, 1e6);
  EXPECT_NEAR(daly - young, -2.0 / 3, 1e-4);
  EXPECT_NEAR(1 - daly_interval(1, 1e4) / young_interval(1, 1e4), 4.7085e-3, 5e-8);
  EXPECT_NEAR(1 - daly / young, 4.7135e-4, 5e-9);
}

// M = 3 h = 10,800 s, δ = 60 s, R = 600 s, τ = 1140 s: a segment is 1200 s, so checkpoints take
// 60/1200 = 5% and failures (600 + 1200/2)/10,800 = 1/9 = 11.11% of wall time; goodput
// = 1 − 0.05 − 1/9 = 0.838889 (exact: 151/180).
TEST(Reliability, GoodputWorkedExample) {
  const Reliability r = expected_goodput(10800, 60, 600, 1140);
  EXPECT_DOUBLE_EQ(r.checkpoint_waste, 0.05);
  EXPECT_DOUBLE_EQ(r.failure_waste, 1.0 / 9);
  EXPECT_NEAR(r.goodput, 151.0 / 180, 1e-12);
  EXPECT_DOUBLE_EQ(r.mtbf_s, 10800);
  EXPECT_DOUBLE_EQ(r.checkpoint_s, 60);
  EXPECT_DOUBLE_EQ(r.restart_s, 600);
  EXPECT_DOUBLE_EQ(r.interval_s, 1140);
}

// The model's waste w(x) = δ/x + (R + x/2)/M, x = τ + δ, is least at x = sqrt(2δM):
// τ = sqrt(2δM) − δ, Daly's first-order optimum. δ = 60, M = 10,800: x = 1138.42, τ = 1078.42 s;
// Daly's higher-order τ = 1098.77 s is Δx = 20.35 s away and loses w''/2 · Δx² = (δ/x³) · Δx²
// = 4.0667e-8 · 414.1 = 1.68e-5 of goodput (to second order; tolerance 0.05e-5 for the rest).
TEST(Reliability, GoodputIsBestAtTheFirstOrderInterval) {
  const double m = 10800;
  const double delta = 60;
  const double best = young_interval(delta, m) - delta;
  auto goodput = [&](double tau) { return expected_goodput(m, delta, 600, tau).goodput; };
  EXPECT_GT(goodput(best), goodput(0.9 * best));
  EXPECT_GT(goodput(best), goodput(1.1 * best));
  EXPECT_NEAR(goodput(best) - goodput(daly_interval(delta, m)), 1.68e-5, 0.05e-5);
}

// Failures faster than the job can make progress: the waste passes 1 and goodput stops at 0.
// M = 600 s, δ = 60 s, R = 600 s, τ = 540 s: waste = 0.1 + (600 + 300)/600 = 1.6.
TEST(Reliability, GoodputIsNeverNegative) {
  EXPECT_DOUBLE_EQ(expected_goodput(600, 60, 600, 540).goodput, 0);
}

// Llama 3 405B: 405e9 parameters · 14 B = 5.67e12 B (5.67 TB); at 1 TB/s aggregate that is
// 5.67 s, at 100 GB/s 56.7 s.
TEST(Reliability, CheckpointSizeAndTime) {
  EXPECT_DOUBLE_EQ(checkpoint_bytes(405e9), 5.67e12);
  EXPECT_DOUBLE_EQ(checkpoint_seconds(5.67e12, 1000), 5.67);
  EXPECT_DOUBLE_EQ(checkpoint_seconds(5.67e12, 100), 56.7);
}

// 1e12 tokens at 1e6 tokens/s and goodput 0.9: 1e12 / 9e5 = 1,111,111.1 s = 308.6420 h
// (exact: 1e7 / 32,400) = 12.86008 days; 1000 devices: 308,642.0 device-hours; 700 W · PUE 1.2
// = 840 W per device: 840 · 308,642.0 Wh = 259.2593 MWh; at $2 per device-hour: $617,283.95.
// Tolerances: half a unit of the last digit written here.
TEST(Reliability, TrainingCostWorkedExample) {
  const TrainingCost c = training_cost(1e12, 1e6, 0.9, 1000, 700, 1.2, 2);
  EXPECT_NEAR(c.days, 12.86008, 5e-6);
  EXPECT_NEAR(c.device_hours, 308642.0, 0.05);
  EXPECT_DOUBLE_EQ(c.device_hours, 1e10 / 32400);
  ASSERT_TRUE(c.energy_mwh.has_value());
  EXPECT_NEAR(*c.energy_mwh, 259.2593, 5e-5);
  ASSERT_TRUE(c.usd.has_value());
  EXPECT_NEAR(*c.usd, 617283.95, 0.005);
}

// Without a TDP or a price, energy and money are absent; the time is the same.
TEST(Reliability, TrainingCostWithoutPowerOrPrice) {
  const TrainingCost c =
      training_cost(1e12, 1e6, 0.9, 1000, std::nullopt, kDefaultPue, std::nullopt);
  EXPECT_NEAR(c.days, 12.86008, 5e-6);
  EXPECT_FALSE(c.energy_mwh.has_value());
  EXPECT_FALSE(c.usd.has_value());
}

TEST(Reliability, TrainingCostOfZeroGoodputIsAnError) {
  try {
    training_cost(1e12, 1e6, 0, 1000, 700, 1.2, 2);
    FAIL() << "expected plumb::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "plan: goodput is 0: failures come faster than checkpoints can be written");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
}

}  // namespace
}  // namespace plumb::plan
