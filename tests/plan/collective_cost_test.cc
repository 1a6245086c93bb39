// Worked examples for the α–β collective costs (src/plan/collective_cost.h). Every expected value
// is computed by hand in the comment above it from the formulas of nccl-tests doc/PERFORMANCE.md
// (bus factors), Thakur, Rabenseifner & Gropp 2005 and Patarasuk & Yuan 2009 (ring), and Sanders,
// Speck & Träff 2009 (double binary tree).
#include "plan/collective_cost.h"

#include <gtest/gtest.h>

#include <string>

namespace plumb::plan {
namespace {

// Sums of a few α and β terms are exact to far better than a picosecond.
constexpr double kTolS = 1e-12;

constexpr double kGB = 1e9;
constexpr double kKB = 1e3;

// The link of the ring example: 100 GB/s one direction, 5 µs per step.
const Link kLink{100, 5e-6};
// Two levels for the hierarchical examples: an NVLink-like node, a slower scale-out rail.
const Link kInside{240, 2e-6};
const Link kAcross{50, 6e-6};

TEST(CollectiveCost, Names) {
  EXPECT_EQ(std::string(collective_name(Collective::kAllReduce)), "allreduce");
  EXPECT_EQ(std::string(collective_name(Collective::kAllGather)), "allgather");
  EXPECT_EQ(std::string(collective_name(Collective::kReduceScatter)), "reducescatter");
  EXPECT_EQ(std::string(collective_name(Collective::kAllToAll)), "alltoall");
  EXPECT_EQ(std::string(collective_name(Collective::kSendRecv)), "sendrecv");
  EXPECT_EQ(std::string(algorithm_name(Algorithm::kAuto)), "auto");
  EXPECT_EQ(std::string(algorithm_name(Algorithm::kRing)), "ring");
  EXPECT_EQ(std::string(algorithm_name(Algorithm::kTree)), "tree");
  EXPECT_EQ(std::string(algorithm_name(Algorithm::kHierarchical)), "hierarchical");
}

// nccl-tests doc/PERFORMANCE.md at n = 8: allreduce 2(n−1)/n = 14/8 = 1.75; allgather,
// reducescatter and alltoall (n−1)/n = 7/8 = 0.875; sendrecv 1.
TEST(CollectiveCost, BusFactorsAtEightRanks) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllToAll, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kSendRecv, 8), 1);
}

// Patarasuk & Yuan: 1 GB on 8 ranks at β = 100 GB/s, α = 5 µs. 2(n−1) = 14 steps:
// 14 · 5 µs = 70 µs; bandwidth term 1e9 · (14/8) / 1e11 = 17.5 ms; total 17.57 ms.
TEST(CollectiveCost, RingAllReduceOfOneGigabyte) {
  EXPECT_NEAR(ring_seconds(Collective::kAllReduce, kGB, 8, kLink),
              14 * 5e-6 + 1e9 * (14.0 / 8) / 1e11, kTolS);
  EXPECT_NEAR(ring_seconds(Collective::kAllReduce, kGB, 8, kLink), 0.01757, kTolS);
}

// Thakur et al.: allgather / reducescatter run n−1 = 7 steps of S/n: 7 · 5 µs = 35 µs plus
// 1e9 · 7/8 / 1e11 = 8.75 ms; 8.785 ms. alltoall is costed the same way. sendrecv is one
// message: 5 µs + 1e9 / 1e11 = 10.005 ms, whatever n.
TEST(CollectiveCost, RingOtherCollectives) {
  EXPECT_NEAR(ring_seconds(Collective::kAllGather, kGB, 8, kLink), 0.008785, kTolS);
  EXPECT_NEAR(ring_seconds(Collective::kReduceScatter, kGB, 8, kLink), 0.008785, kTolS);
  EXPECT_NEAR(ring_seconds(Collective::kAllToAll, kGB, 8, kLink), 0.008785, kTolS);
  EXPECT_NEAR(ring_seconds(Collective::kSendRecv, kGB, 8, kLink), 0.010005, kTolS);
  EXPECT_NEAR(ring_seconds(Collective::kSendRecv, kGB, 2, kLink), 0.010005, kTolS);
}

// Sanders et al.: 2·ceil(log2 n)·α + 2S/β. n = 8: 2 · 3 · 5 µs = 30 µs; 2e9 / 1e11 = 20 ms;
// 20.03 ms. n = 6: ceil(log2 6) = 3 as well. n = 9: ceil(log2 9) = 4, 40 µs + 20 ms.
TEST(CollectiveCost, TreeAllReduce) {
  EXPECT_NEAR(tree_seconds(Collective::kAllReduce, kGB, 8, kLink), 0.02003, kTolS);
  EXPECT_NEAR(tree_seconds(Collective::kAllReduce, kGB, 6, kLink), 0.02003, kTolS);
  EXPECT_NEAR(tree_seconds(Collective::kAllReduce, kGB, 9, kLink), 0.02004, kTolS);
}

// The tree moves 2S against the ring's 2(n−1)/n·S but takes 2·log2 n steps against 2(n−1):
// at 1 GB the ring wins (17.57 ms < 20.03 ms); at 1 KB the tree does:
// ring 70 µs + 1e3 · 1.75 / 1e11 = 70.0175 µs, tree 30 µs + 2e3 / 1e11 = 30.02 µs.
TEST(CollectiveCost, TreeBeatsRingOnlyForSmallMessages) {
  EXPECT_LT(ring_seconds(Collective::kAllReduce, kGB, 8, kLink),
            tree_seconds(Collective::kAllReduce, kGB, 8, kLink));
  EXPECT_NEAR(ring_seconds(Collective::kAllReduce, kKB, 8, kLink), 70.0175e-6, kTolS);
  EXPECT_NEAR(tree_seconds(Collective::kAllReduce, kKB, 8, kLink), 30.02e-6, kTolS);
}

// NCCL has no tree for the other collectives: the tree cost is the ring cost.
TEST(CollectiveCost, TreeFallsBackToRing) {
  for (Collective c : {Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll,
                       Collective::kSendRecv}) {
    EXPECT_DOUBLE_EQ(tree_seconds(c, kGB, 8, kLink), ring_seconds(c, kGB, 8, kLink))
        << collective_name(c);
  }
  EXPECT_NEAR(tree_seconds(Collective::kAllGather, kGB, 8, kLink), 0.008785, kTolS);
}

// q = 8 ranks per node at 240 GB/s, 2 µs; m = 4 nodes at 50 GB/s, 6 µs; S = 1 GB.
//   reduce-scatter in the node: 7 · 2 µs + 1e9 · 7/8 / 2.4e11 = 14 µs + 3.6458333 ms
//   allreduce of S/8 = 125 MB across 4 nodes: 6 · 6 µs + 1.25e8 · 6/4 / 5e10 = 36 µs + 3.75 ms
//   allgather in the node: as the reduce-scatter, 14 µs + 3.6458333 ms
//   total 64 µs + 7.2916667 ms + 3.75 ms = 11.1056667 ms.
// The flat ring over all 32 ranks at the slow link: 62 · 6 µs + 1e9 · 62/32 / 5e10
// = 372 µs + 38.75 ms = 39.122 ms, three and a half times slower.
TEST(CollectiveCost, HierarchicalAllReduceIsThreeRingPhases) {
  const double s = kGB;
  const double phases = ring_seconds(Collective::kReduceScatter, s, 8, kInside) +
                        ring_seconds(Collective::kAllReduce, s / 8, 4, kAcross) +
                        ring_seconds(Collective::kAllGather, s, 8, kInside);
  const double hier = hierarchical_seconds(Collective::kAllReduce, s, 8, 4, kInside, kAcross);
  EXPECT_DOUBLE_EQ(hier, phases);
  EXPECT_NEAR(hier, 64e-6 + 2 * 1e9 * 0.875 / 2.4e11 + 3.75e-3, kTolS);
  EXPECT_NEAR(hier, 0.0111056666666667, kTolS);
  const double flat = ring_seconds(Collective::kAllReduce, s, 32, kAcross);
  EXPECT_NEAR(flat, 0.039122, kTolS);
  EXPECT_LT(hier, flat);
}

// At 1 KB the latency terms rule. Hierarchical: 2 · 7 · 2 µs + 6 · 6 µs = 64 µs plus
// 2 · 1e3 · 7/8 / 2.4e11 + 125 · 6/4 / 5e10 = 7.2917 ns + 3.75 ns: 64.011042 µs.
// Flat ring: 372 µs + 1e3 · 62/32 / 5e10 = 372.03875 µs. Double binary tree over the 32 ranks
// at the slow link: 2 · 5 · 6 µs + 2e3 / 5e10 = 60.04 µs. So for small S the hierarchical
// allreduce still beats the flat ring but loses to the tree; at 1 GB the tree is the slowest
// (60 µs + 40 ms = 40.06 ms).
TEST(CollectiveCost, HierarchicalLosesToTheTreeForSmallMessages) {
  const double hier = hierarchical_seconds(Collective::kAllReduce, kKB, 8, 4, kInside, kAcross);
  const double ring = ring_seconds(Collective::kAllReduce, kKB, 32, kAcross);
  const double tree = tree_seconds(Collective::kAllReduce, kKB, 32, kAcross);
  EXPECT_NEAR(hier, 64e-6 + 2 * 1e3 * 0.875 / 2.4e11 + 3.75e-9, kTolS);
  EXPECT_NEAR(ring, 372.03875e-6, kTolS);
  EXPECT_NEAR(tree, 60.04e-6, kTolS);
  EXPECT_LT(tree, hier);
  EXPECT_LT(hier, ring);
  EXPECT_NEAR(tree_seconds(Collective::kAllReduce, kGB, 32, kAcross), 0.04006, kTolS);
}

// allgather over q = 8, m = 4 of S = 1 GB gathered: the node phase of S
// (7 · 2 µs + 1e9 · 7/8 / 2.4e11 = 14 µs + 3.6458333 ms) and the cross-node phase of S/8
// (3 · 6 µs + 1.25e8 · 3/4 / 5e10 = 18 µs + 1.875 ms): 5.5528333 ms.
TEST(CollectiveCost, HierarchicalAllGatherAndReduceScatter) {
  const double expected = 32e-6 + 1e9 * 0.875 / 2.4e11 + 1.875e-3;
  EXPECT_NEAR(hierarchical_seconds(Collective::kAllGather, kGB, 8, 4, kInside, kAcross), expected,
              kTolS);
  EXPECT_NEAR(hierarchical_seconds(Collective::kReduceScatter, kGB, 8, 4, kInside, kAcross),
              expected, kTolS);
  EXPECT_NEAR(expected, 0.0055528333333333, kTolS);
}

// alltoall of one rank's 1 GB over q = 8, m = 4: (m−1)/m = 750 MB leaves the node,
// 250 MB stays. Inside: 7 · 2 µs + 2.5e8 · 7/8 / 2.4e11 = 14 µs + 0.91145833 ms. Across:
// 3 · 6 µs + 7.5e8 / 5e10 = 18 µs + 15 ms. Total 15.94345833 ms.
TEST(CollectiveCost, HierarchicalAllToAll) {
  EXPECT_NEAR(hierarchical_seconds(Collective::kAllToAll, kGB, 8, 4, kInside, kAcross),
              32e-6 + 2.5e8 * 0.875 / 2.4e11 + 0.015, kTolS);
  EXPECT_NEAR(hierarchical_seconds(Collective::kAllToAll, kGB, 8, 4, kInside, kAcross),
              0.0159434583333333, kTolS);
}

// sendrecv crosses the slow link once: 6 µs + 1e9 / 5e10 = 20.006 ms.
TEST(CollectiveCost, HierarchicalSendRecvCrossesTheSlowLink) {
  EXPECT_NEAR(hierarchical_seconds(Collective::kSendRecv, kGB, 8, 4, kInside, kAcross), 0.020006,
              kTolS);
}

// One rank per node is a ring across the nodes; one node is a ring inside it.
TEST(CollectiveCost, HierarchicalWithOneLevelIsARing) {
  EXPECT_DOUBLE_EQ(hierarchical_seconds(Collective::kAllReduce, kGB, 1, 4, kInside, kAcross),
                   ring_seconds(Collective::kAllReduce, kGB, 4, kAcross));
  EXPECT_DOUBLE_EQ(hierarchical_seconds(Collective::kAllReduce, kGB, 8, 1, kInside, kAcross),
                   ring_seconds(Collective::kAllReduce, kGB, 8, kInside));
}

// A group of one rank has nothing to exchange, whatever the algorithm; nor has an empty buffer.
TEST(CollectiveCost, SingleRankGroupsCostNothing) {
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                       Collective::kAllToAll}) {
    EXPECT_EQ(ring_seconds(c, kGB, 1, kLink), 0) << collective_name(c);
    EXPECT_EQ(tree_seconds(c, kGB, 1, kLink), 0) << collective_name(c);
    EXPECT_EQ(hierarchical_seconds(c, kGB, 1, 1, kInside, kAcross), 0) << collective_name(c);
    EXPECT_EQ(ring_seconds(c, 0, 8, kLink), 0) << collective_name(c);
    EXPECT_EQ(tree_seconds(c, 0, 8, kLink), 0) << collective_name(c);
  }
}

}  // namespace
}  // namespace plumb::plan
