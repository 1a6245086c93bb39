#include "common/stats.h"

#include <gtest/gtest.h>

#include <vector>

namespace plumb {
namespace {

// Worked example (numpy.percentile, method "linear"): x = 15 20 35 40 50.
TEST(Percentile, LinearInterpolationWorkedExample) {
  const std::vector<double> x = {40, 15, 50, 35, 20};  // unsorted on purpose
  EXPECT_DOUBLE_EQ(percentile(x, 0), 15);
  EXPECT_DOUBLE_EQ(percentile(x, 40), 29);     // h = 1.6: 20 + 0.6 × 15
  EXPECT_DOUBLE_EQ(percentile(x, 50), 35);
  EXPECT_DOUBLE_EQ(percentile(x, 99), 49.6);   // h = 3.96: 40 + 0.96 × 10
  EXPECT_DOUBLE_EQ(percentile(x, 100), 50);
}

TEST(Percentile, EdgeCases) {
  EXPECT_DOUBLE_EQ(percentile(std::vector<double>{}, 50), 0);
  EXPECT_DOUBLE_EQ(percentile(std::vector<double>{7}, 99), 7);
  EXPECT_DOUBLE_EQ(percentile(std::vector<double>{1, 2}, 150), 2);  // clamped
}

TEST(Mean, Values) {
  EXPECT_DOUBLE_EQ(mean(std::vector<double>{1, 2, 3, 4}), 2.5);
  EXPECT_DOUBLE_EQ(mean(std::vector<double>{}), 0);
}

}  // namespace
}  // namespace plumb
