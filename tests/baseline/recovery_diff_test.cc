// The recovery records' diff on hand-made recovery baselines, with worked numbers, and the kinds
// of records plumb diff refuses to mix.
#include "baseline/recovery_diff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "baseline/record_kind.h"
#include "common/error.h"
#include "supervise/recovery_json.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

// Two failures whose reset-device took `reset` s each (clear-cache 2 s), detected in 1 and 3 s,
// down 60 + reset and 80 + reset s, losing 40 and `lost2` steps; the second resumed after its
// checkpoint when `resumed2`.
supervise::RecoveryBaseline drill(double reset, int64_t lost2 = 40, bool resumed2 = true) {
  supervise::RecoveryBaseline b;
  b.command = {"torchrun", "train.py"};
  b.attempts = 3;
  b.result = "finished";
  b.drill = true;
  b.faults_injected = 2;
  b.failures_by_kind = {{"signal", 2}};
  for (int i = 0; i < 2; ++i) {
    supervise::Recovery r;
    r.attempt = i + 1;
    r.kind = "signal";
    r.detail = "SIGKILL";
    r.detect_seconds = i == 0 ? 1 : 3;
    r.steps = {{"clear-cache", 2, true, ""}, {"reset-device", reset, true, ""}};
    r.downtime_seconds = (i == 0 ? 60 : 80) + reset;
    r.steps_lost = i == 0 ? 40 : lost2;
    r.resumed_after_checkpoint = i == 0 ? true : resumed2;
    b.recoveries.push_back(r);
  }
  return b;
}

Record record_of(const supervise::RecoveryBaseline& b, int64_t id) {
  Record r;
  r.id = id;
  r.source = "plumb run torchrun train.py";
  r.recovery = supervise::recovery_to_json(b);
  return r;
}

const RecoveryFigureDiff& figure(const RecoveryDiff& d, const std::string& field) {
  for (const RecoveryFigureDiff& f : d.figures) {
    if (f.field == field) return f;
  }
  throw std::runtime_error("no figure " + field);
}

// reset-device 20 → 30 s: recovery 22 → 32 s (+45.5%), downtime median 90 → 100 s (+11.1%):
// both beyond 10%, a regression; detection and steps lost the same.
TEST(RecoveryDiff, WorkedExampleSlowerReset) {
  const RecoveryDiff d = recovery_diff(record_of(drill(20), 1), record_of(drill(30), 2));
  const RecoveryFigureDiff& recovery = figure(d, "recovery_seconds_median");
  EXPECT_EQ(recovery.a, 22);
  EXPECT_EQ(recovery.b, 32);
  EXPECT_NEAR(recovery.change, 10.0 / 22, 1e-12);
  EXPECT_EQ(recovery.verdict, Verdict::kRegression);
  EXPECT_EQ(figure(d, "downtime_seconds_median").a, 90);
  EXPECT_EQ(figure(d, "downtime_seconds_median").b, 100);
  EXPECT_EQ(figure(d, "downtime_seconds_median").verdict, Verdict::kRegression);
  EXPECT_EQ(figure(d, "detect_seconds_median").a, 2);
  EXPECT_EQ(figure(d, "detect_seconds_max").b, 3);
  EXPECT_EQ(figure(d, "detect_seconds_median").verdict, Verdict::kSame);
  EXPECT_EQ(figure(d, "steps_lost").a, 80);
  EXPECT_EQ(figure(d, "failures").gates, false);
  ASSERT_EQ(d.steps.size(), 2u);
  EXPECT_EQ(d.steps[1].figure, "reset-device");
  EXPECT_EQ(d.steps[1].verdict, Verdict::kRegression);
  EXPECT_FALSE(d.steps[1].gates);
  EXPECT_EQ(d.regressions(), 3);  // recovery median and max, downtime median
  EXPECT_EQ(d.exit_code(), 1);
  // A 50% threshold lets +45.5% and +11.1% pass.
  EXPECT_EQ(recovery_diff(record_of(drill(20), 1), record_of(drill(30), 2), {0.5}).exit_code(), 0);
  // Faster is an improvement, never a failure.
  const RecoveryDiff faster = recovery_diff(record_of(drill(30), 1), record_of(drill(20), 2));
  EXPECT_EQ(figure(faster, "recovery_seconds_median").verdict, Verdict::kImprovement);
  EXPECT_EQ(faster.exit_code(), 0);
}

// More steps lost (40 + 40 → 40 + 80: +50%) and half the restarts resuming right after their
// checkpoint (100% → 50%) are regressions; from 0 steps lost to some is one whatever the
// threshold.
TEST(RecoveryDiff, StepsLostAndResumedShare) {
  const RecoveryDiff d = recovery_diff(record_of(drill(20), 1), record_of(drill(20, 80, false), 2));
  EXPECT_EQ(figure(d, "steps_lost").verdict, Verdict::kRegression);
  EXPECT_EQ(figure(d, "resumed_after_checkpoint_ratio").a, 1);
  EXPECT_EQ(figure(d, "resumed_after_checkpoint_ratio").b, 0.5);
  EXPECT_EQ(figure(d, "resumed_after_checkpoint_ratio").verdict, Verdict::kRegression);
  EXPECT_EQ(d.regressions(), 2);
  supervise::RecoveryBaseline none = drill(20, 0);
  none.recoveries[0].steps_lost = 0;
  const RecoveryDiff from_zero =
      recovery_diff(record_of(none, 1), record_of(drill(20, 1), 2), {0.99});
  EXPECT_EQ(figure(from_zero, "steps_lost").verdict, Verdict::kRegression);
  EXPECT_TRUE(std::isnan(figure(from_zero, "steps_lost").change));
}

// A run that gave up before making progress again has no downtime: only in A, not judged.
TEST(RecoveryDiff, AFigureOnlyOneRecordHasIsNotJudged) {
  supervise::RecoveryBaseline gave_up = drill(20);
  for (supervise::Recovery& r : gave_up.recoveries) r.downtime_seconds.reset();
  gave_up.result = "gave_up";
  const RecoveryDiff d = recovery_diff(record_of(drill(20), 1), record_of(gave_up, 2));
  EXPECT_EQ(figure(d, "downtime_seconds_median").verdict, Verdict::kOnlyInA);
  EXPECT_TRUE(std::isnan(figure(d, "downtime_seconds_median").b));
  EXPECT_EQ(d.exit_code(), 0);
  EXPECT_EQ(recovery_diff_json(d)["figures"][5],
            json({{"figure", "downtime s, median"}, {"field", "downtime_seconds_median"},
                  {"a", 90.0}, {"b", nullptr}, {"change", nullptr}, {"verdict", "only in A"},
                  {"gates", true}}));
}

TEST(RecoveryDiff, RecordsOfDifferentKindsAreBadInput) {
  Record comm;
  comm.id = 4;
  Record step;
  step.id = 2;
  step.step = {{"schema", "plumb.step/1"}};
  const Record recovery = record_of(drill(20), 6);
  EXPECT_EQ(kind_of(recovery), RecordKind::kRecovery);
  EXPECT_EQ(test::error_message([&] { recovery_diff(recovery, comm); }),
            "baseline 6 holds a recovery record, baseline 4 none: plumb diff compares records of "
            "the same kind");
  EXPECT_EQ(test::error_message([&] { recovery_diff(comm, recovery); }),
            "baseline 6 holds a recovery record, baseline 4 none: plumb diff compares records of "
            "the same kind");
  EXPECT_EQ(test::error_message([&] { check_same_kind(recovery, step, {}); }),
            "baseline 6 holds a recovery record, baseline 2 a step record: plumb diff compares "
            "records of the same kind");
  EXPECT_EQ(test::error_message([&] { check_same_kind(comm, step, {}); }),
            "baseline 2 holds a step record, baseline 4 none: plumb diff compares records of the "
            "same kind");
}

TEST(RecoveryDiff, BadFieldsAreNamed) {
  Record bad = record_of(drill(20), 7);
  bad.recovery["recoveries"][1]["steps"][0]["seconds"] = "fast";
  EXPECT_EQ(test::error_message([&] { recovery_diff(record_of(drill(20), 1), bad); }),
            "baseline 7: recoveries[1].steps[0].seconds: expected a number, got \"fast\"");
  DiffOptions named;
  named.a_name = "file a.json";
  bad.recovery = 5;
  EXPECT_EQ(test::error_message([&] { recovery_diff(bad, record_of(drill(20), 1), named); }),
            "file a.json: plumb.recovery/1: expected an object, got 5");
}

}  // namespace
}  // namespace plumb::baseline
