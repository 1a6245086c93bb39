// plumb plan validate's reporters: a built-in set's rows keep their table and five JSON keys; a
// run set's rows name the run, its quantity, source, assumed fields and notes (golden output).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "report/plan_reporter.h"

namespace plumb::report {
namespace {

plan::ValidationSet run_set() {
  plan::ValidationSet s;
  s.name = "mine";
  s.source = "My runs (mine.yaml)";
  s.quantity = "tokens/s per device";
  plan::ValidationRow row("", "tp 2 pp 2 dp 4 mbs 1 gbs 64", 900, 1000);
  row.name = "gpt on 16";
  row.quantity = "tokens/s per device";
  row.source = "a paper, Table 2";
  row.assumed = {{"mbs", "not published"}};
  row.notes = {"test-gpu has no measured GEMM efficiency in the catalog: 0.78 assumed"};
  s.rows = {row};
  plan::summarize(s);
  return s;
}

// 900 against 1000: −10.0%, within issue 15's 12% and 25%.
TEST(PlanValidationReporter, RunSetRowsGolden) {
  std::ostringstream out;
  print_validation({run_set()}, {{0.12, 0.25, 0}}, true, out);
  EXPECT_EQ(out.str(),
            "# mine · My runs (mine.yaml) · tokens/s per device\n"
            "run       quantity              predicted   published    error\n"
            "gpt on 16 tokens/s per device         900        1000   -10.0%\n"
            "    layout tp 2 pp 2 dp 4 mbs 1 gbs 64\n"
            "    source a paper, Table 2\n"
            "    assumed mbs: not published\n"
            "    note: test-gpu has no measured GEMM efficiency in the catalog: 0.78 assumed\n"
            "mine: 1 rows · MAPE 10.0% (target ≤ 12%) · largest error 10.0% (target ≤ 25%)\n"
            "mine: meets its target\n\n");
}

// Four significant digits, whole numbers from 10,000: 43141.6 → "43142", 0.381234 → "0.3812".
TEST(PlanValidationReporter, RunSetFiguresReadable) {
  plan::ValidationSet s = run_set();
  s.rows[0].predicted = 43141.6;
  s.rows[0].published = 30000;
  s.rows.push_back(s.rows[0]);
  s.rows[1].predicted = 0.381234;
  s.rows[1].published = 0.4;
  std::ostringstream out;
  print_validation({s}, {{0.12, 0.25, 0}}, true, out);
  EXPECT_NE(out.str().find("      43142       30000   +43.8%\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("     0.3812         0.4    -4.7%\n"), std::string::npos) << out.str();
}

TEST(PlanValidationReporter, RunSetRowJsonNamesTheRun) {
  const nlohmann::json j = validation_json({run_set()}, {{0.12, 0.25, 0}}, {});
  const nlohmann::json& row = j["sets"][0]["rows"][0];
  EXPECT_EQ(row["name"], "gpt on 16");
  EXPECT_EQ(row["split"], "build");
  EXPECT_EQ(row["quantity"], "tokens/s per device");
  EXPECT_EQ(row["source"], "a paper, Table 2");
  EXPECT_EQ(row["assumed"], (nlohmann::json{{"mbs", "not published"}}));
  EXPECT_EQ(row["notes"].size(), 1u);
  EXPECT_NEAR(row["error"].get<double>(), -0.1, 1e-12);
  EXPECT_TRUE(j["sets"][0]["meets_target"].get<bool>());
}

TEST(PlanValidationReporter, BuiltInRowsKeepTheirTableAndKeys) {
  plan::ValidationSet s;
  s.name = "megatron-sc21";
  s.source = "SC21";
  s.quantity = "TFLOP/s per GPU";
  s.rows = {{"1.7B", "tp 1 pp 1 dp 32", 137.4, 137.0}};
  plan::summarize(s);
  std::ostringstream out;
  print_validation({s}, {{0.10, 0.20, 0}}, true, out);
  EXPECT_NE(out.str().find("model    layout                       predicted   published    "
                           "error\n1.7B     tp 1 pp 1 dp 32                  137.4       137.0 "
                           "   +0.3%\n"),
            std::string::npos)
      << out.str();
  const nlohmann::json row = validation_json({s}, {{0.10, 0.20, 0}}, {})["sets"][0]["rows"][0];
  EXPECT_EQ(row.size(), 5u);  // group, layout, predicted, published, error
  EXPECT_FALSE(row.contains("name"));
}

}  // namespace
}  // namespace plumb::report
