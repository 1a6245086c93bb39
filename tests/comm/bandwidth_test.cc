#include "comm/bandwidth.h"

#include <gtest/gtest.h>

#include <vector>

namespace plumb::comm {
namespace {

// 2 ranks × 5 iterations. Per-iteration maxima: 10 12 30 11 14 (rank 0 slowest in 3 of 5).
TEST(IterationStats, MaxOverRanksThenPercentiles) {
  const std::vector<double> times = {
      10, 9, 30, 8, 14,   // rank 0
      7, 12, 20, 11, 13,  // rank 1
  };
  const IterationStats s = iteration_stats(times, 2, 5);
  // sorted maxima: 10 11 12 14 30
  EXPECT_DOUBLE_EQ(s.p50_s, 12);
  EXPECT_DOUBLE_EQ(s.p99_s, 14 + 0.96 * 16);  // h = 3.96
  EXPECT_DOUBLE_EQ(s.max_s, 30);
  EXPECT_EQ(s.straggler, 0);  // rank 0 slowest in iterations 0, 2, 4
  EXPECT_DOUBLE_EQ(s.straggler_share, 0.6);
}

TEST(IterationStats, TieGoesToLowestRank) {
  const std::vector<double> times = {5, 5, 5, 5};
  const IterationStats s = iteration_stats(times, 2, 2);
  EXPECT_EQ(s.straggler, 0);
  EXPECT_DOUBLE_EQ(s.straggler_share, 1.0);
  EXPECT_EQ(iteration_stats({}, 0, 0).straggler, -1);
}

}  // namespace
}  // namespace plumb::comm
