#include "comm/collective.h"

#include <gtest/gtest.h>

#include "comm/bandwidth.h"
#include "common/error.h"

namespace plumb::comm {
namespace {

TEST(Collectives, TableOrderAndLookup) {
  std::vector<std::string> names;
  for (const Collective* c : all_collectives()) names.emplace_back(c->name());
  EXPECT_EQ(names, (std::vector<std::string>{"allreduce", "allgather", "reducescatter", "alltoall",
                                             "broadcast", "reduce", "sendrecv"}));
  EXPECT_EQ(find_collective("all_reduce_perf").name(), "allreduce");
  EXPECT_EQ(find_collective("reduce_scatter").name(), "reducescatter");
  EXPECT_EQ(find_collective("AllToAll").name(), "alltoall");
  try {
    find_collective("allreduse");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--collectives: unknown collective 'allreduse' (did you mean "
                           "'allreduce'?); expected one of allreduce, allgather, reducescatter, "
                           "alltoall, broadcast, reduce, sendrecv");
  }
}

// nccl-tests doc/PERFORMANCE.md: allreduce 2(n-1)/n; reducescatter, allgather, alltoall (n-1)/n;
// broadcast, reduce and sendrecv 1.
TEST(Collectives, BusFactors) {
  EXPECT_DOUBLE_EQ(find_collective("allreduce").bus_factor(8), 1.75);
  EXPECT_DOUBLE_EQ(find_collective("allreduce").bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(find_collective("allgather").bus_factor(8), 0.875);
  EXPECT_DOUBLE_EQ(find_collective("reducescatter").bus_factor(4), 0.75);
  EXPECT_DOUBLE_EQ(find_collective("alltoall").bus_factor(4), 0.75);
  EXPECT_DOUBLE_EQ(find_collective("broadcast").bus_factor(8), 1.0);
  EXPECT_DOUBLE_EQ(find_collective("reduce").bus_factor(8), 1.0);
  EXPECT_DOUBLE_EQ(find_collective("sendrecv").bus_factor(8), 1.0);
  EXPECT_DOUBLE_EQ(find_collective("allreduce").bus_factor(1), 0.0);
}

void expect_counts(std::string_view coll, size_t bytes, size_t element, int n, Counts want) {
  const Counts got = find_collective(coll).counts(bytes, element, n);
  EXPECT_EQ(got.send_count, want.send_count) << coll;
  EXPECT_EQ(got.recv_count, want.recv_count) << coll;
  EXPECT_EQ(got.count, want.count) << coll;
  EXPECT_EQ(got.bytes, want.bytes) << coll;
}

// Rows of real nccl-tests logs (tests/fixtures/nccl-tests): size and count columns.
TEST(Collectives, CountsMatchNcclTestsLogs) {
  // all_reduce_perf, 8 ranks, double: 33554432 B -> count 4194304
  expect_counts("allreduce", 33554432, 8, 8, {4194304, 4194304, 4194304, 33554432});
  // alltoall_perf, 4 ranks, double: 33554432 B -> count 1048576 per peer
  expect_counts("alltoall", 33554432, 8, 4, {4194304, 4194304, 1048576, 33554432});
  // sendrecv_perf, 4 ranks, double: 33554432 B -> count 4194304
  expect_counts("sendrecv", 33554432, 8, 4, {4194304, 4194304, 4194304, 33554432});
}

TEST(Collectives, CountsPerRankAndRounding) {
  // allgather: count is the per-rank block, size the gathered total
  expect_counts("allgather", 1024, 4, 8, {32, 256, 32, 1024});
  // reducescatter: count is the per-rank output block, size the full input
  expect_counts("reducescatter", 1024, 4, 8, {256, 32, 32, 1024});
  // 100 B of float32 over 8 ranks rounds down to 3 elements per rank = 96 B
  expect_counts("allgather", 100, 4, 8, {3, 24, 3, 96});
  expect_counts("alltoall", 100, 4, 8, {24, 24, 3, 96});
  // 8 B over 8 ranks: zero elements per rank, as nccl-tests prints it
  expect_counts("reducescatter", 8, 4, 8, {0, 0, 0, 0});
  // allreduce only rounds to whole elements
  expect_counts("allreduce", 10, 4, 8, {2, 2, 2, 8});
  expect_counts("broadcast", 7, 2, 3, {3, 3, 3, 6});
}

// The first row of tests/fixtures/nccl-tests/all_reduce_8xH100_v2.17.8.log:
// 33554432 B, 182.87 us -> algbw 183.49, busbw 321.10 GB/s.
TEST(Bandwidth, MatchesNcclTestsRow) {
  const double algbw = algbw_gbps(33554432, 182.87e-6);
  EXPECT_NEAR(algbw, 183.49, 0.005);
  EXPECT_NEAR(busbw_gbps(algbw, find_collective("allreduce").bus_factor(8)), 321.10, 0.01);
  // alltoall_sendrecv_4ranks_2nodes_mid2025.log: 33554432 B, 576.5 us -> 58.21 / 43.66 (the log
  // prints the time with one decimal, so the bandwidths agree to about 0.01)
  const double a2a = algbw_gbps(33554432, 576.5e-6);
  EXPECT_NEAR(a2a, 58.21, 0.01);
  EXPECT_NEAR(busbw_gbps(a2a, find_collective("alltoall").bus_factor(4)), 43.66, 0.01);
  EXPECT_EQ(algbw_gbps(1000, 0.0), 0.0);
}

TEST(Expected, PlacesBlocksLikeNccl) {
  const Pattern plain(DataType::kFloat32, 4);
  const Counts ag = find_collective("allgather").counts(64, 4, 4);  // 4 elements per rank
  // element 9 of the gathered buffer: rank 2's element 1
  EXPECT_EQ(*find_collective("allgather").expected(plain, 0, 4, ag, {}, 9), plain.value(2, 1));
  const Counts a2a = find_collective("alltoall").counts(64, 4, 4);  // 4 elements per peer
  // rank 1's element 13 is element 1 of block 3, sent by rank 3 from its block for rank 1:
  // rank 3's element 1·4 + 1 = 5
  EXPECT_EQ(*find_collective("alltoall").expected(plain, 1, 4, a2a, {}, 13), plain.value(3, 5));
  const Pattern sum(DataType::kFloat32, ReduceOp::kSum, 4);
  const Counts rs = find_collective("reducescatter").counts(64, 4, 4);  // 16 in, 4 out per rank
  // rank 2's element 1 is element 2·4 + 1 = 9 of the reduced buffer
  EXPECT_EQ(*find_collective("reducescatter").expected(sum, 2, 4, rs, {}, 1), sum.reduced(9));
  CollArgs rooted;
  rooted.root = 1;
  EXPECT_FALSE(find_collective("reduce").expected(sum, 0, 4, rs, rooted, 0).has_value());
  EXPECT_EQ(*find_collective("reduce").expected(sum, 1, 4, rs, rooted, 5), sum.reduced(5));
  EXPECT_EQ(*find_collective("broadcast").expected(plain, 3, 4, rs, rooted, 5), plain.value(1, 5));
  EXPECT_EQ(*find_collective("sendrecv").expected(plain, 0, 4, rs, {}, 5), plain.value(3, 5));
}

}  // namespace
}  // namespace plumb::comm
