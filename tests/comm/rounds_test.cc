#include "comm/rounds.h"

#include <gtest/gtest.h>

#include <cmath>

namespace plumb::comm {
namespace {

Row round(uint64_t bytes, double busbw, int64_t wrong = 0) {
  Row r;
  r.layer = "world";
  r.group = "world";
  r.collective = "allreduce";
  r.requested_bytes = bytes;
  r.busbw_gbps = busbw;
  r.time_us = 1000 / busbw;
  r.wrong = wrong;
  return r;
}

// Worked example: rounds 10, 12, 4 GB/s -> median 10; deviations 0, 2, 6 -> MAD 2 -> 20%.
TEST(Rounds, MedianRoundAndItsDeviation) {
  const std::vector<Row> rows =
      combine_rounds({round(1024, 10), round(2048, 5), round(1024, 12), round(2048, 5, 1),
                      round(1024, 4), round(2048, 5)});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].requested_bytes, 1024u);
  EXPECT_DOUBLE_EQ(rows[0].busbw_gbps, 10);
  EXPECT_DOUBLE_EQ(rows[0].time_us, 100);  // the whole median row, not a mix
  EXPECT_DOUBLE_EQ(rows[0].busbw_spread, 0.2);
  EXPECT_EQ(rows[1].requested_bytes, 2048u);
  EXPECT_DOUBLE_EQ(rows[1].busbw_spread, 0);
  EXPECT_EQ(rows[1].wrong, 1);  // a wrong element in any round is kept
}

TEST(Rounds, TwoRoundsTakeTheLowerAndTheirDistance) {
  const std::vector<Row> rows = combine_rounds({round(8, 8), round(8, 10)});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].busbw_gbps, 8);
  EXPECT_DOUBLE_EQ(rows[0].busbw_spread, 0.25);
}

TEST(Rounds, OneRoundKeepsNoSpreadAndUncheckedStaysUnchecked) {
  const std::vector<Row> rows = combine_rounds({round(8, 8, -1)});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(std::isnan(rows[0].busbw_spread));
  EXPECT_EQ(rows[0].wrong, -1);
}

}  // namespace
}  // namespace plumb::comm
