// plumb plan validate: Spearman's rank correlation on worked examples, and the predictor against
// both published sets within issue 4's bounds.
#include "plan/validation.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/error.h"
#include "plan/hardware.h"

namespace plumb::plan {
namespace {

// Ranks 1..5 against 2,1,4,3,5: Σd² = 4, ρ = 1 − 6·4/(5·24) = 0.8.
TEST(Validation, SpearmanWorkedExample) {
  const std::vector<double> a = {10, 20, 30, 40, 50};
  const std::vector<double> b = {2.0, 1.0, 4.0, 3.0, 5.0};
  EXPECT_NEAR(spearman(a, b), 0.8, 1e-12);
  const std::vector<double> reversed = {5, 4, 3, 2, 1};
  EXPECT_NEAR(spearman(a, reversed), -1, 1e-12);
}

// Ties take their average rank: b's ranks are 1.5, 1.5, 3 → ρ = Pearson of (1,2,3),(1.5,1.5,3)
// = 0.866025.
TEST(Validation, SpearmanTiesTakeTheAverageRank) {
  const std::vector<double> a = {1, 2, 3};
  const std::vector<double> b = {7, 7, 9};
  EXPECT_NEAR(spearman(a, b), 0.8660254037844386, 1e-12);
}

TEST(Validation, SummarizeMapeLargestErrorAndGroups) {
  ValidationSet s;
  s.rows = {{"a", "x", 110, 100}, {"a", "y", 90, 100}, {"a", "z", 300, 200}, {"b", "w", 50, 100}};
  summarize(s);
  EXPECT_NEAR(s.mape, (0.1 + 0.1 + 0.5 + 0.5) / 4, 1e-12);
  EXPECT_NEAR(s.max_abs_error, 0.5, 1e-12);
  ASSERT_EQ(s.spearman.size(), 1u);  // group b has one row: no correlation
  // a: predicted ranks 2, 1, 3 against published 1.5, 1.5, 3 → 0.866025.
  EXPECT_NEAR(s.spearman.at("a"), 0.8660254037844386, 1e-12);
}

// Issue 4: SC21 MAPE ≤ 10% and no row beyond 20%; vTrain MAPE ≤ 15%, Spearman ≥ 0.7 per model.
TEST(Validation, PublishedSetsWithinTheirBounds) {
  const HardwareSpec a100 = load_hardware(PLUMB_DATA_DIR "/hardware/a100-80gb.yaml");
  const ValidationSet sc21 = validate_megatron_sc21(PLUMB_DATA_DIR "/validation/megatron_sc21_table1.csv", a100);
  EXPECT_EQ(sc21.rows.size(), 10u);
  EXPECT_LE(sc21.mape, 0.10);
  EXPECT_LE(sc21.max_abs_error, 0.20);
  const ValidationSet vtrain = validate_vtrain(PLUMB_DATA_DIR "/validation/vtrain_ground_truth_multi.csv", a100);
  EXPECT_EQ(vtrain.rows.size(), 109u);
  EXPECT_LE(vtrain.mape, 0.15);
  EXPECT_EQ(vtrain.spearman.size(), 4u);
  for (const auto& [group, rho] : vtrain.spearman) EXPECT_GE(rho, 0.7) << group;
}

TEST(Validation, BadCsvNamesFileAndLine) {
  const std::string path = ::testing::TempDir() + "/bad.csv";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("# comment\nparams_b,heads\n1.7,24,2304,24,1,1,32,512,fast,44,4.4\n", f);
  std::fclose(f);
  const HardwareSpec a100 = load_hardware(PLUMB_DATA_DIR "/hardware/a100-80gb.yaml");
  try {
    validate_megatron_sc21(path, a100);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ":3: 'fast' is not a finite number");
  }
}

}  // namespace
}  // namespace plumb::plan
