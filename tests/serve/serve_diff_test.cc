#include "baseline/serve_diff.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/error.h"
#include "report/serve_diff_reporter.h"

namespace plumb::baseline {
namespace {

using serve::ServeResult;
using serve::ServeRun;
using serve::ServeSummary;

// Every latency scaled by `latency`, every throughput by `speed`.
ServeSummary summary(double latency, double speed) {
  ServeSummary s;
  s.completed = 500;
  s.ttft_ms = {500, 100 * latency, 100 * latency, 150 * latency, 200 * latency, 250 * latency};
  s.tpot_ms = {500, 20 * latency, 20 * latency, 24 * latency, 30 * latency, 35 * latency};
  s.itl_ms = s.tpot_ms;
  s.e2e_ms = {500, 2600 * latency, 2600 * latency, 3000 * latency, 3500 * latency, 4000 * latency};
  s.output_tokens_per_second = 4000 * speed;
  s.goodput_requests_per_second = 30 * speed;
  return s;
}

// A run at `concurrency` with `repeats` repetitions spread ±`spread` around `latency`.
ServeRun run(int concurrency, double latency, int repeats, double spread) {
  ServeRun r;
  r.concurrency = concurrency;
  r.summary = summary(latency, 1 / latency);
  for (int i = 0; i < repeats; ++i) {
    const double f = latency * (1 + spread * (i % 3 - 1));  // −spread, 0, +spread, ...
    r.repeats.push_back(summary(f, 1 / f));
  }
  return r;
}

ServeResult result(std::vector<ServeRun> runs) {
  ServeResult r;
  r.setup.url = "http://127.0.0.1:8000";
  r.setup.model = "m";
  r.setup.slo.tpot_ms = 50;
  r.runs = std::move(runs);
  return r;
}

const ServeFigureDiff& figure(const ServeRunDiff& r, const std::string& name) {
  for (const ServeFigureDiff& f : r.figures) {
    if (f.figure == name) return f;
  }
  throw std::runtime_error("no figure " + name);
}

std::string console(const ServeDiff& d) {
  std::ostringstream out;
  report::print_serve_diff(d, out);
  return out.str();
}

TEST(ServeDiff, TwentyPercentSlowerTpotWithTightRepeatsIsARegression) {
  const ServeDiff d = diff_serve(result({run(8, 1.0, 5, 0.005)}), result({run(8, 1.2, 5, 0.005)}));
  ASSERT_EQ(d.runs.size(), 1u);
  const ServeFigureDiff& tpot = figure(d.runs[0], "tpot p99");
  EXPECT_NEAR(tpot.change, 0.2, 1e-9);
  EXPECT_LT(tpot.noise, 0.2);
  EXPECT_EQ(tpot.verdict, Verdict::kRegression);
  EXPECT_EQ(figure(d.runs[0], "output tokens/s").verdict, Verdict::kRegression);
  EXPECT_EQ(d.runs[0].verdict, Verdict::kRegression);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_NE(console(d).find("REGRESSION: 10 regression(s) of B against A beyond the threshold and "
                            "the noise: concurrency 8 ttft p50, concurrency 8 ttft p99"),
            std::string::npos)
      << console(d);
}

TEST(ServeDiff, IdenticalRunsAreNotARegression) {
  const ServeDiff d = diff_serve(result({run(8, 1.0, 5, 0.01)}), result({run(8, 1.0, 5, 0.01)}));
  EXPECT_EQ(d.regressions(), 0);
  EXPECT_EQ(d.too_noisy(), 0);
  EXPECT_EQ(d.exit_code(), 0);
  EXPECT_EQ(d.runs[0].verdict, Verdict::kSame);
  const std::string text = console(d);
  EXPECT_NE(text.find("no regression beyond the threshold and the noise\n"), std::string::npos);
  EXPECT_NE(text.find("concurrency 8 (A 5 repeats, B 5 repeats)\n"), std::string::npos);
  EXPECT_NE(text.find("  tpot p99 (ms)                      30         30    +0.0%     4%  same\n"),
            std::string::npos)
      << text;
}

TEST(ServeDiff, NoiseLargerThanTheChangeIsTooNoisy) {
  const ServeDiff d = diff_serve(result({run(8, 1.0, 5, 0.2)}), result({run(8, 1.15, 5, 0.2)}));
  const ServeFigureDiff& tpot = figure(d.runs[0], "tpot p99");
  EXPECT_GT(tpot.noise, 0.15);
  EXPECT_EQ(tpot.verdict, Verdict::kTooNoisy);
  EXPECT_EQ(d.regressions(), 0);
  EXPECT_EQ(d.exit_code(), 3);
  EXPECT_EQ(d.too_noisy_advice(),
            "to judge them, repeat each load point more times: the noise falls about as "
            "1/√repetitions, so about --repeat 30 in both records would bring it under the change; "
            "or measure when the server is quieter");
  EXPECT_NE(console(d).find("TOO NOISY TO JUDGE: "), std::string::npos);
}

TEST(ServeDiff, WithoutRepeatsOnlyTheThresholdJudges) {
  const ServeDiff d = diff_serve(result({run(8, 1.0, 0, 0)}), result({run(8, 1.2, 0, 0)}));
  EXPECT_EQ(figure(d.runs[0], "tpot p99").noise, 0);
  EXPECT_EQ(figure(d.runs[0], "tpot p99").verdict, Verdict::kRegression);
  ASSERT_EQ(d.notes.size(), 2u);
  EXPECT_EQ(d.notes[0],
            "A has runs with fewer than 3 repetitions (--repeat): no noise estimate for them, only "
            "the threshold judges");
  const ServeDiff small = diff_serve(result({run(8, 1.0, 0, 0)}), result({run(8, 1.05, 0, 0)}));
  EXPECT_EQ(small.exit_code(), 0);
}

TEST(ServeDiff, FasterIsAnImprovement) {
  const ServeDiff d = diff_serve(result({run(8, 1.0, 5, 0.005)}), result({run(8, 0.7, 5, 0.005)}));
  EXPECT_EQ(figure(d.runs[0], "e2e p50").verdict, Verdict::kImprovement);
  EXPECT_EQ(figure(d.runs[0], "goodput").verdict, Verdict::kImprovement);
  EXPECT_EQ(d.exit_code(), 0);
}

// Every request of B failed: its latencies measured nothing. They are "measured in A only",
// never a 100% faster improvement; the throughput that fell to 0 is the regression.
TEST(ServeDiff, LatenciesBMeasuredNothingAreOnlyInANeverAnImprovement) {
  ServeRun failed = run(8, 1.0, 0, 0);
  failed.summary = ServeSummary{};
  failed.summary.errors = 500;
  const ServeDiff d = diff_serve(result({run(8, 1.0, 0, 0)}), result({failed}));
  EXPECT_EQ(figure(d.runs[0], "tpot p99").verdict, Verdict::kOnlyInA);
  EXPECT_EQ(figure(d.runs[0], "ttft p50").verdict, Verdict::kOnlyInA);
  EXPECT_EQ(figure(d.runs[0], "output tokens/s").verdict, Verdict::kRegression);
  EXPECT_EQ(d.exit_code(), 1);
}

TEST(ServeDiff, RunsAreMatchedByLoadAndTheRestAreOnlyInOne) {
  const ServeDiff d = diff_serve(result({run(1, 1, 0, 0), run(2, 1, 0, 0)}),
                                 result({run(2, 1, 0, 0), run(4, 1, 0, 0)}));
  ASSERT_EQ(d.runs.size(), 3u);
  EXPECT_EQ(d.runs[0].load, "concurrency 1");
  EXPECT_EQ(d.runs[0].verdict, Verdict::kOnlyInA);
  EXPECT_EQ(d.runs[1].load, "concurrency 2");
  EXPECT_EQ(d.runs[1].verdict, Verdict::kSame);
  EXPECT_EQ(d.runs[2].load, "concurrency 4");
  EXPECT_EQ(d.runs[2].verdict, Verdict::kOnlyInB);
  EXPECT_NE(console(d).find("concurrency 1: only in A\n"), std::string::npos);
}

TEST(ServeDiff, NoSharedLoadPointIsBadInput) {
  ServeRun rate = run(0, 1, 0, 0);
  rate.rate = 5;
  try {
    diff_serve(result({run(1, 1, 0, 0), run(2, 1, 0, 0)}), result({rate}), {0.1, false, "a.json", "b.json"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_STREQ(e.what(),
                 "a.json and b.json share no load point (a.json: concurrency 1, concurrency 2; "
                 "b.json: rate 5/s): nothing to compare");
  }
  EXPECT_THROW(diff_serve(result({}), result({rate})), Error);
}

TEST(ServeDiff, GoodputWithoutAnSloIsNotCompared) {
  ServeResult a = result({run(8, 1, 0, 0)});
  ServeResult b = result({run(8, 1, 0, 0)});
  a.setup.slo = {};
  const ServeDiff d = diff_serve(a, b);
  EXPECT_TRUE(std::isnan(figure(d.runs[0], "goodput").a));
  EXPECT_EQ(figure(d.runs[0], "goodput").verdict, Verdict::kSame);
  ASSERT_EQ(d.variables.size(), 1u);
  EXPECT_EQ(d.variables[0].name, "slo");
  EXPECT_EQ(d.variables[0].a, "(none)");
  EXPECT_EQ(d.variables[0].b, "tpot=50ms");
}

TEST(ServeDiff, SeveralSettingsChangedWarnsThatNoneCanBeBlamed) {
  ServeResult b = result({run(8, 1, 0, 0)});
  b.setup.model = "m2";
  b.setup.seed = 7;
  const ServeDiff d = diff_serve(result({run(8, 1, 0, 0)}), b);
  EXPECT_EQ(d.attribution_warning(),
            "2 settings differ (model, seed): a change cannot be put down to one of them");
}

TEST(ServeDiff, JsonHasItsSchemaAndEveryFigure) {
  const ServeDiff d = diff_serve(result({run(8, 1.0, 5, 0.005)}), result({run(8, 1.2, 5, 0.005)}));
  std::ostringstream out;
  report::write_serve_diff_json(d, out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "plumb.serve-diff/1");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["regressions"], 10);
  EXPECT_EQ(j["runs"][0]["load"], "concurrency 8");
  EXPECT_EQ(j["runs"][0]["figures"].size(), 10u);
  EXPECT_EQ(j["runs"][0]["figures"][3]["field"], "tpot_ms.p99");
  EXPECT_EQ(j["runs"][0]["figures"][3]["verdict"], "regression");
  EXPECT_TRUE(j["advice"].is_null());
}

}  // namespace
}  // namespace plumb::baseline
