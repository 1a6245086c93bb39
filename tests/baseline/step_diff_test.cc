// The step records' diff on hand-made plumb.step/1 records, with worked numbers.
#include "baseline/step_diff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

// One rank's steps 1..n: step time, exposed communication and compute per step.
struct RankSeries {
  std::vector<double> step_time;
  std::vector<double> exposed;
  std::vector<double> compute;
};

json steps_of(const RankSeries& s) {
  json steps = json::array();
  for (size_t i = 0; i < s.step_time.size(); ++i) {
    const double exposed = i < s.exposed.size() ? s.exposed[i] : 0;
    const double compute = i < s.compute.size() ? s.compute[i] : 0;
    steps.push_back({{"step", static_cast<int>(i) + 1}, {"step_time_us", s.step_time[i]},
                     {"compute_us", compute}, {"communication_us", exposed},
                     {"exposed_communication_us", exposed}, {"overlapped_us", 0},
                     {"memory_us", 0}, {"idle_us", s.step_time[i] - compute - exposed}});
  }
  return steps;
}

json step_doc(const std::vector<RankSeries>& ranks) {
  json list = json::array();
  for (size_t r = 0; r < ranks.size(); ++r) list.push_back({{"rank", r}, {"steps", steps_of(ranks[r])}});
  return {{"schema", "plumb.step/1"}, {"world_size", ranks.size()}, {"ranks", list},
          {"collectives", json::array()}, {"stragglers", json::array()}};
}

Record step_record(json doc, int64_t id = 0) {
  Record r;
  r.id = id;
  r.source = "plumb step traces/";
  r.step = std::move(doc);
  return r;
}

std::vector<double> scaled(const std::vector<double>& v, double factor) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * factor);
  return out;
}

const StepFigureDiff& figure(const StepDiff& d, const std::string& name) {
  for (const StepFigureDiff& f : d.figures) {
    if (f.figure == name) return f;
  }
  throw std::runtime_error("no figure " + name);
}

// Worked example. A: rank 0 is the slowest in step time (100, 102, 98, 101, 99 ms; rank 1 0.5 ms
// less), rank 1 in exposed communication (5.0, 5.1, 4.9, 5.0, 5.0 ms). Medians of the per-step
// maxima: 100 ms and 5 ms; step time MAD 1 ms. B: step time +20 ms every step, exposed +0.2 ms.
// σ per MAD at 5 steps: 1.8581 / √5 = 0.83097; step time σ_A = σ_B = 0.83097 × 1 / 100 = 0.83%,
// noise 3.5 × √2 × 0.83% = 4.11%: +20% is a regression. Exposed: MAD 0, noise 0, +4% < 10%:
// same. Compute: unchanged.
TEST(StepDiff, WorkedExampleStepTimeRegression) {
  const std::vector<double> t = {100000, 102000, 98000, 101000, 99000};
  const std::vector<double> t1 = {99500, 101500, 97500, 100500, 98500};
  const std::vector<double> e0 = {4000, 4000, 4000, 4000, 4000};
  const std::vector<double> e1 = {5000, 5100, 4900, 5000, 5000};
  const std::vector<double> c = {80000, 80000, 80000, 80000, 80000};
  const Record a = step_record(step_doc({{t, e0, c}, {t1, e1, c}}), 3);
  std::vector<double> tb;
  for (double x : t) tb.push_back(x + 20000);
  std::vector<double> eb;
  for (double x : e1) eb.push_back(x + 200);
  const Record b = step_record(step_doc({{tb, e0, c}, {t1, eb, c}}), 5);
  const StepDiff d = step_diff(a, b);
  EXPECT_EQ(d.ranks_a, 2);
  EXPECT_EQ(d.steps_b, 5);
  const StepFigureDiff& step = figure(d, "step time");
  EXPECT_DOUBLE_EQ(step.a_us, 100000);
  EXPECT_DOUBLE_EQ(step.b_us, 120000);
  EXPECT_DOUBLE_EQ(step.change, 0.2);
  EXPECT_NEAR(step.noise, 3.5 * std::sqrt(2.0) * 1.8581 / std::sqrt(5.0) * 0.01, 1e-9);
  EXPECT_NEAR(step.noise, 0.04113, 1e-5);
  EXPECT_EQ(step.verdict, Verdict::kRegression);
  const StepFigureDiff& exposed = figure(d, "exposed communication");
  EXPECT_DOUBLE_EQ(exposed.a_us, 5000);
  EXPECT_DOUBLE_EQ(exposed.b_us, 5200);
  EXPECT_DOUBLE_EQ(exposed.noise, 0);
  EXPECT_EQ(exposed.verdict, Verdict::kSame);
  EXPECT_EQ(figure(d, "compute").verdict, Verdict::kSame);
  EXPECT_FALSE(figure(d, "compute").gates);
  EXPECT_EQ(d.regressions(), 1);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_TRUE(d.notes.empty());
  EXPECT_TRUE(d.variables.empty());
  const json j = step_diff_json(d);
  EXPECT_EQ(j["schema"], "plumb.step-diff/1");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["figures"][0]["figure"], "step time");
  EXPECT_EQ(j["figures"][0]["verdict"], "regression");
  EXPECT_EQ(j["figures"][0]["a_us"], 100000.0);
  EXPECT_EQ(j["figures"][1]["verdict"], "same");
  EXPECT_TRUE(j["advice"].is_null());
}

// Steps that scatter: A 100, 120, 80, 115, 85 ms (median 100, MAD 15); B = A × 1.15 (median 115,
// MAD 17.25). σ_A = 0.83097 × 15 / 100 = 12.46%, σ_B = 0.83097 × 17.25 / 100 = 14.33%, noise
// 3.5 × 19.0% = 66.5%: +15% is too noisy to judge, exit 3. With the noise as 1.8581 / √k per MAD,
// k = 99 steps bring it under 15%.
TEST(StepDiff, AChangeWithinTheStepsSpreadIsTooNoisyToJudge) {
  const std::vector<double> t = {100000, 120000, 80000, 115000, 85000};
  const Record a = step_record(step_doc({{t, {}, {}}}));
  const Record b = step_record(step_doc({{scaled(t, 1.15), {}, {}}}));
  const StepDiff d = step_diff(a, b);
  const StepFigureDiff& step = figure(d, "step time");
  EXPECT_NEAR(step.change, 0.15, 1e-12);
  EXPECT_NEAR(step.noise, 3.5 * std::hypot(0.830968 * 0.15, 0.830968 * 0.1725), 1e-5);
  EXPECT_EQ(step.verdict, Verdict::kTooNoisy);
  EXPECT_EQ(d.too_noisy(), 1);
  EXPECT_EQ(d.exit_code(), 3);
  EXPECT_NE(d.too_noisy_advice().find("about 99 steps in each trace"), std::string::npos)
      << d.too_noisy_advice();
}

// A step twice as long is a regression whatever the noise: A 100, 160, 40, 150, 50 ms (MAD 50),
// B = 2 × A: noise 3.5 × √(41.5%² + 83.1%²) = 325% is far beyond the +100%.
TEST(StepDiff, ATwiceLongerStepIsARegressionWhateverTheNoise) {
  const std::vector<double> t = {100000, 160000, 40000, 150000, 50000};
  const StepDiff d = step_diff(step_record(step_doc({{t, {}, {}}})),
                               step_record(step_doc({{scaled(t, 2), {}, {}}})));
  const StepFigureDiff& step = figure(d, "step time");
  EXPECT_GT(step.noise, 3.0);
  EXPECT_EQ(step.verdict, Verdict::kRegression);
  EXPECT_EQ(d.exit_code(), 1);
  // Half as long: an improvement whatever the noise, and no failure.
  const StepDiff back = step_diff(step_record(step_doc({{scaled(t, 2), {}, {}}})),
                                  step_record(step_doc({{t, {}, {}}})));
  EXPECT_EQ(figure(back, "step time").verdict, Verdict::kImprovement);
  EXPECT_EQ(back.exit_code(), 0);
}

// Fewer than 3 steps: no noise estimate, the threshold alone judges, and a note says so.
TEST(StepDiff, FewerThanThreeStepsAreJudgedByTheThresholdAlone) {
  const StepDiff d = step_diff(step_record(step_doc({{{100000, 200000}, {}, {}}})),
                               step_record(step_doc({{{115000, 230000}, {}, {}}})));
  const StepFigureDiff& step = figure(d, "step time");
  EXPECT_DOUBLE_EQ(step.a_us, 150000);  // the median of two: their mean
  EXPECT_DOUBLE_EQ(step.b_us, 172500);
  EXPECT_DOUBLE_EQ(step.noise, 0);
  EXPECT_EQ(step.verdict, Verdict::kRegression);
  ASSERT_EQ(d.notes.size(), 2u);
  EXPECT_EQ(d.notes[0], "A has 2 step(s), fewer than 3: no noise estimate, only the threshold "
                        "judges");
  // Within the threshold: the same. A threshold of 20% lets +15% pass.
  DiffOptions loose;
  loose.threshold = 0.20;
  EXPECT_EQ(step_diff(step_record(step_doc({{{100000, 200000}, {}, {}}})),
                      step_record(step_doc({{{115000, 230000}, {}, {}}})), loose)
                .exit_code(),
            0);
}

// A had all its communication overlapped (exposed 0): B's 15 ms exposed are judged against A's
// 100 ms step: +15% of the step, a regression.
TEST(StepDiff, ExposedCommunicationFromNoneIsJudgedAgainstTheStep) {
  const std::vector<double> t = {100000, 100000, 100000};
  const StepDiff d = step_diff(step_record(step_doc({{t, {0, 0, 0}, {}}})),
                               step_record(step_doc({{t, {15000, 15000, 15000}, {}}})));
  const StepFigureDiff& exposed = figure(d, "exposed communication");
  EXPECT_TRUE(exposed.of_step_time);
  EXPECT_DOUBLE_EQ(exposed.change, 0.15);
  EXPECT_EQ(exposed.verdict, Verdict::kRegression);
  EXPECT_EQ(figure(d, "step time").verdict, Verdict::kSame);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(step_diff_json(d)["figures"][1]["change_of"], "A step time");
}

// busbw per collective kind (median over instances, shown not judged into the status) and the
// whole-trace straggler, which moved from rank 1 to rank 3: reported, exit 0.
TEST(StepDiff, CollectivesAndStragglerAreReportedNotFailed) {
  const std::vector<double> t = {100000, 100000, 100000};
  json a = step_doc({{t, {}, {}}});
  json b = step_doc({{t, {}, {}}});
  for (double bw : {80.0, 82.0, 78.0}) a["collectives"].push_back({{"kind", "allreduce"}, {"busbw_gbps", bw}});
  a["collectives"].push_back({{"kind", "allreduce"}, {"busbw_gbps", nullptr}});  // no size known
  a["collectives"].push_back({{"kind", "allgather"}, {"busbw_gbps", 40.0}});
  for (double bw : {60.0, 62.0, 58.0}) b["collectives"].push_back({{"kind", "allreduce"}, {"busbw_gbps", bw}});
  a["stragglers"] = json::array({{{"step", 1}, {"rank", 0}, {"waited_on_us", 50.0}},
                                 {{"step", -1}, {"rank", 1}, {"waited_on_us", 300.5}}});
  b["stragglers"] = json::array({{{"step", -1}, {"rank", 3}, {"waited_on_us", 900.0}}});
  a["world_size"] = 4;
  b["world_size"] = 4;
  const StepDiff d = step_diff(step_record(a), step_record(b));
  ASSERT_EQ(d.collectives.size(), 2u);
  const StepCollectiveDiff& gather = d.collectives[0];
  EXPECT_EQ(gather.kind, "allgather");
  EXPECT_EQ(gather.verdict, Verdict::kOnlyInA);
  const StepCollectiveDiff& reduce = d.collectives[1];
  EXPECT_EQ(reduce.instances_a, 3);
  EXPECT_DOUBLE_EQ(reduce.busbw_a, 80);
  EXPECT_DOUBLE_EQ(reduce.busbw_b, 60);
  EXPECT_DOUBLE_EQ(reduce.change, -0.25);
  // 3 instances: σ per MAD 1; MAD 2 GB/s of 80 on both sides: noise 3.5 × √2 × 2.5% = 12.4%.
  EXPECT_NEAR(reduce.noise, 3.5 * std::sqrt(2.0) * 0.025, 1e-12);
  EXPECT_EQ(reduce.verdict, Verdict::kRegression);
  EXPECT_EQ(d.straggler_a.rank, 1);
  EXPECT_DOUBLE_EQ(d.straggler_a.waited_on_us, 300.5);
  EXPECT_EQ(d.straggler_b.rank, 3);
  EXPECT_TRUE(d.straggler_moved());
  EXPECT_EQ(d.exit_code(), 0);
  const json j = step_diff_json(d);
  EXPECT_EQ(j["straggler"]["moved"], true);
  EXPECT_EQ(j["straggler"]["b"]["rank"], 3);
  EXPECT_EQ(j["collectives"][1]["verdict"], "regression");
}

TEST(StepDiff, WorldSizeIsAContextDifference) {
  json a = step_doc({{{1000, 1000, 1000}, {}, {}}});
  json b = a;
  b["world_size"] = 8;
  const StepDiff d = step_diff(step_record(a), step_record(b));
  ASSERT_EQ(d.variables.size(), 1u);
  EXPECT_EQ(d.variables[0].name, "world_size");
  EXPECT_EQ(d.variables[0].a, "1");
  EXPECT_EQ(d.variables[0].b, "8");
}

TEST(StepDiff, RecordsOfDifferentKindsAreBadInput) {
  Record comm;
  comm.id = 5;
  comm.rows.resize(1);
  const Record step = step_record(step_doc({{{1000, 1000, 1000}, {}, {}}}), 3);
  DiffOptions o;
  o.a_name = "baseline 3";
  o.b_name = "baseline 5";
  EXPECT_EQ(test::error_message([&] { step_diff(step, comm, o); }),
            "baseline 3 holds a step record, baseline 5 none: plumb diff compares records of the "
            "same kind");
  o.a_name = "baseline 5";
  o.b_name = "file b.json";
  EXPECT_EQ(test::error_message([&] { check_same_kind(comm, step_record(step_doc({}), 0), o); }),
            "file b.json holds a step record, baseline 5 none: plumb diff compares records of the "
            "same kind");
}

// Every bad field named with its path in the record; never a library message.
TEST(StepDiff, BadFieldsAreNamed) {
  const json good = step_doc({{{1000, 1000, 1000}, {}, {}}, {{1000, 1000, 1000}, {}, {}}});
  const Record other = step_record(good);
  DiffOptions o;
  o.a_name = "baseline 3";
  auto message = [&](const json& doc) {
    return test::error_message([&] { step_diff(step_record(doc), other, o); });
  };
  json bad = good;
  bad["ranks"][1]["steps"][0]["step_time_us"] = "x";
  EXPECT_EQ(message(bad), "baseline 3: step.ranks[1].steps[0].step_time_us: expected a number, "
                          "got \"x\"");
  bad = good;
  bad["schema"] = "plumb.comm/1";
  EXPECT_EQ(message(bad), "baseline 3: step.schema: expected \"plumb.step/1\", got \"plumb.comm/1\"");
  bad = good;
  bad.erase("ranks");
  EXPECT_EQ(message(bad), "baseline 3: step.ranks: missing");
  bad = good;
  bad["ranks"][0]["steps"][2].erase("step");
  EXPECT_EQ(message(bad), "baseline 3: step.ranks[0].steps[2].step: missing");
  bad = good;
  bad["collectives"] = json::array({{{"kind", 7}, {"busbw_gbps", 1.0}}});
  EXPECT_EQ(message(bad), "baseline 3: step.collectives[0].kind: expected a string, got 7");
  bad = good;
  bad["stragglers"] = json::array({{{"step", -1}, {"rank", 0}}});
  EXPECT_EQ(message(bad), "baseline 3: step.stragglers[0].waited_on_us: missing");
  EXPECT_EQ(message(json::array({1})), "baseline 3: step: expected an object, got [1]");
  EXPECT_EQ(message(step_doc({})), "baseline 3: step.ranks: no rank holds a step; expected the "
                                   "steps of a plumb step run to compare");
  try {
    step_diff(step_record(bad), other, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
}

// What plumb show prints: medians of the per-step maxima, busbw per kind, the straggler.
TEST(StepDiff, SummaryOfARecord) {
  json doc = step_doc({{{100000, 102000, 98000}, {5000, 6000, 7000}, {80000, 81000, 82000}},
                       {{99000, 103000, 97000}, {1000, 1000, 1000}, {90000, 90000, 90000}}});
  doc["collectives"] = json::array({{{"kind", "allreduce"}, {"busbw_gbps", 10.0}},
                                    {{"kind", "allreduce"}, {"busbw_gbps", 30.0}}});
  doc["stragglers"] = json::array({{{"step", -1}, {"rank", 1}, {"waited_on_us", 12.5}}});
  const StepSummary s = summarize_step(doc, "baseline 7");
  EXPECT_EQ(s.world_size, 2);
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.steps, 3);
  ASSERT_EQ(s.figures.size(), 3u);
  EXPECT_DOUBLE_EQ(s.figures[0].median_us, 100000);  // maxima 100, 103, 98 ms
  EXPECT_DOUBLE_EQ(s.figures[1].median_us, 6000);
  EXPECT_DOUBLE_EQ(s.figures[2].median_us, 90000);
  ASSERT_EQ(s.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(s.collectives[0].busbw_gbps, 20);
  EXPECT_EQ(s.straggler.rank, 1);
}

}  // namespace
}  // namespace plumb::baseline
