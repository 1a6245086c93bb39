// Where a group's ranks sit (group_shape) and which algorithm and time Network picks for it, with
// and without a measured busbw curve. Costs are the α–β formulas of src/plan/collective_cost.h,
// worked by hand in the comments.
#include "plan/network.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace plumb::plan {
namespace {

constexpr double kTolS = 1e-12;  // a picosecond: far below any term here
constexpr double kGB = 1e9;

// 8 devices per node, 32 nodes per rack; node 200 GB/s and 2 µs, rail 50 GB/s and 5 µs,
// spine 25 GB/s and 10 µs.
ClusterSpec cluster() {
  ClusterSpec c;
  c.name = "test";
  c.devices_per_node = 8;
  c.nodes_per_rack = 32;
  c.node = {200, 2e-6};
  c.rail = {50, 5e-6};
  c.spine = {25, 10e-6};
  return c;
}

void expect_shape(const GroupShape& g, int ranks, int per_node, int nodes, NetLayer widest) {
  EXPECT_EQ(g.ranks, ranks);
  EXPECT_EQ(g.per_node, per_node);
  EXPECT_EQ(g.nodes, nodes);
  EXPECT_EQ(g.widest, widest) << net_layer_name(g.widest);
}

// TP 8 with stride 1 fills one node of 8; TP 4 half of one.
TEST(GroupShape, TensorParallelInsideOneNode) {
  expect_shape(group_shape(8, 1, cluster()), 8, 8, 1, NetLayer::kNode);
  expect_shape(group_shape(4, 1, cluster()), 4, 4, 1, NetLayer::kNode);
}

TEST(GroupShape, OneRankIsOneNode) {
  expect_shape(group_shape(1, 8, cluster()), 1, 1, 1, NetLayer::kNode);
}

// DP with stride 8 (TP 8 inside each node): one member per node. 32 members span ranks 0..248,
// nodes 0..31: one rack, the rail. 64 members span 64 nodes, more than the 32 of a rack: spine.
// With 64 nodes per rack the 64 stay on the rail.
TEST(GroupShape, DataParallelAcrossNodes) {
  expect_shape(group_shape(32, 8, cluster()), 32, 1, 32, NetLayer::kRail);
  expect_shape(group_shape(64, 8, cluster()), 64, 1, 64, NetLayer::kSpine);
  ClusterSpec big = cluster();
  big.nodes_per_rack = 64;
  expect_shape(group_shape(64, 8, big), 64, 1, 64, NetLayer::kRail);
}

// Stride 16 leaves every other node out: 16 members span ranks 0..240, nodes 0..30 (counted
// as 16 · 16 / 8 = 32 nodes): rail. 17 members reach node 32, the next rack: spine.
TEST(GroupShape, SparseStrideCountsTheNodesItSpans) {
  expect_shape(group_shape(16, 16, cluster()), 16, 1, 16, NetLayer::kRail);
  expect_shape(group_shape(17, 16, cluster()), 17, 1, 17, NetLayer::kSpine);
}

// Stride below a node: CP 4 with stride 4 puts 2 members in each of 2 nodes; 16 consecutive
// ranks fill 2 nodes; 264 consecutive ranks fill 33 nodes, more than a rack.
TEST(GroupShape, SeveralMembersPerNode) {
  expect_shape(group_shape(4, 4, cluster()), 4, 2, 2, NetLayer::kRail);
  expect_shape(group_shape(16, 1, cluster()), 16, 8, 2, NetLayer::kRail);
  expect_shape(group_shape(8 * 33, 1, cluster()), 264, 8, 33, NetLayer::kSpine);
}

// TP 8 in one node, allreduce of 1 GB: ring 14 · 2 µs + 1e9 · 1.75 / 2e11 = 28 µs + 8.75 ms
// = 8.778 ms; tree 6 · 2 µs + 2e9 / 2e11 = 12 µs + 10 ms = 10.012 ms. Ring wins.
// 64 KiB = 65536 B: ring 28 µs + 65536 · 1.75 / 2e11 = 28.57344 µs; tree 12 µs + 131072 / 2e11
// = 12.65536 µs. Tree wins. One node has no second level: hierarchical is not a candidate.
TEST(Network, AutoPicksTheFastestInsideANode) {
  const Network net(cluster(), Algorithm::kAuto);
  const GroupShape tp = group_shape(8, 1, net.cluster());
  const CollectiveTime large = net.time(Collective::kAllReduce, kGB, tp);
  EXPECT_EQ(large.algorithm, Algorithm::kRing);
  EXPECT_NEAR(large.seconds, 8.778e-3, kTolS);
  EXPECT_FALSE(large.measured);
  const CollectiveTime small = net.time(Collective::kAllReduce, 65536, tp);
  EXPECT_EQ(small.algorithm, Algorithm::kTree);
  EXPECT_NEAR(small.seconds, 12.65536e-6, kTolS);
}

// DP 16 over 2 nodes of 8 (rail), allreduce of 1 GB:
//   ring over 16 ranks at the rail: 30 · 5 µs + 1e9 · 30/16 / 5e10 = 150 µs + 37.5 ms = 37.65 ms
//   tree: 2 · 4 · 5 µs + 2e9 / 5e10 = 40 µs + 40 ms = 40.04 ms
//   hierarchical: reduce-scatter in the node 7 · 2 µs + 1e9 · 7/8 / 2e11 = 14 µs + 4.375 ms,
//   allreduce of 125 MB over 2 nodes 2 · 5 µs + 1.25e8 · 1 / 5e10 = 10 µs + 2.5 ms, allgather
//   as the reduce-scatter: 38 µs + 11.25 ms = 11.288 ms. Hierarchical wins.
TEST(Network, AutoPicksHierarchicalAcrossNodes) {
  const Network net(cluster(), Algorithm::kAuto);
  const GroupShape dp = group_shape(16, 1, net.cluster());
  const CollectiveTime t = net.time(Collective::kAllReduce, kGB, dp);
  EXPECT_EQ(t.algorithm, Algorithm::kHierarchical);
  EXPECT_NEAR(t.seconds, 11.288e-3, kTolS);
  EXPECT_DOUBLE_EQ(t.seconds, hierarchical_seconds(Collective::kAllReduce, kGB, 8, 2,
                                                   net.cluster().node, net.cluster().rail));
}

// An algorithm asked for is used even where another is faster (the numbers of the two tests
// above).
TEST(Network, UsesTheAlgorithmAskedFor) {
  const GroupShape tp = group_shape(8, 1, cluster());
  const GroupShape dp = group_shape(16, 1, cluster());
  const CollectiveTime ring =
      Network(cluster(), Algorithm::kRing).time(Collective::kAllReduce, 65536, tp);
  EXPECT_EQ(ring.algorithm, Algorithm::kRing);
  EXPECT_NEAR(ring.seconds, 28.57344e-6, kTolS);
  const CollectiveTime tree =
      Network(cluster(), Algorithm::kTree).time(Collective::kAllReduce, kGB, tp);
  EXPECT_EQ(tree.algorithm, Algorithm::kTree);
  EXPECT_NEAR(tree.seconds, 10.012e-3, kTolS);
  const CollectiveTime flat =
      Network(cluster(), Algorithm::kRing).time(Collective::kAllReduce, kGB, dp);
  EXPECT_EQ(flat.algorithm, Algorithm::kRing);
  EXPECT_NEAR(flat.seconds, 37.65e-3, kTolS);
  const CollectiveTime hier =
      Network(cluster(), Algorithm::kHierarchical).time(Collective::kAllReduce, kGB, dp);
  EXPECT_EQ(hier.algorithm, Algorithm::kHierarchical);
  EXPECT_NEAR(hier.seconds, 11.288e-3, kTolS);
}

// NCCL has no tree allgather: asking for the tree costs the ring, as tree_seconds does. TP 8
// allgather of 1 GB in the node: 7 · 2 µs + 1e9 · 7/8 / 2e11 = 14 µs + 4.375 ms = 4.389 ms.
TEST(Network, TreeAskedForAnAllGatherCostsTheRing) {
  const GroupShape tp = group_shape(8, 1, cluster());
  const CollectiveTime t =
      Network(cluster(), Algorithm::kTree).time(Collective::kAllGather, kGB, tp);
  EXPECT_NEAR(t.seconds, 4.389e-3, kTolS);
  EXPECT_EQ(t.algorithm, Algorithm::kRing);  // what ran, not what was asked
}

// Hierarchical asked for a group inside one node: one level, the ring runs and is reported.
TEST(Network, HierarchicalInsideANodeIsTheRing) {
  const GroupShape tp = group_shape(8, 1, cluster());
  const CollectiveTime t =
      Network(cluster(), Algorithm::kHierarchical).time(Collective::kAllGather, kGB, tp);
  EXPECT_NEAR(t.seconds, 4.389e-3, kTolS);
  EXPECT_EQ(t.algorithm, Algorithm::kRing);
}

// sendrecv between pipeline stages a node apart crosses the rail once: 5 µs + 1e9 / 5e10
// = 20.005 ms, whatever the algorithm.
TEST(Network, SendRecvIsOneMessage) {
  const GroupShape pp = group_shape(2, 8, cluster());
  expect_shape(pp, 2, 1, 2, NetLayer::kRail);
  const CollectiveTime t =
      Network(cluster(), Algorithm::kAuto).time(Collective::kSendRecv, kGB, pp);
  EXPECT_EQ(t.algorithm, Algorithm::kRing);
  EXPECT_NEAR(t.seconds, 20.005e-3, kTolS);
}

TEST(Network, SingleRankGroupsCostNothing) {
  const Network net(cluster(), Algorithm::kAuto);
  const GroupShape one = group_shape(1, 1, net.cluster());
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                       Collective::kAllToAll}) {
    EXPECT_EQ(net.time(c, kGB, one).seconds, 0) << collective_name(c);
  }
  EXPECT_EQ(net.time(Collective::kAllReduce, 0, group_shape(8, 1, net.cluster())).seconds, 0);
}

// A curve measured on the node layer only: 175 GB/s busbw for every collective.
std::optional<double> node_only(NetLayer layer, Collective, double) {
  if (layer == NetLayer::kNode) return 175.0;
  return std::nullopt;
}

// The measured busbw replaces the α–β model: time = S · factor / busbw = 1e9 · 1.75 / 1.75e11
// = 10 ms for an allreduce of 1 GB over 8 ranks, no latency term. Ring and tree give the same
// time from the curve; the first candidate, the ring, is kept.
TEST(Network, MeasuredBusbwReplacesTheModel) {
  const Network net(cluster(), Algorithm::kAuto, node_only);
  EXPECT_TRUE(net.measured_used().empty());
  const CollectiveTime t = net.time(Collective::kAllReduce, kGB, group_shape(8, 1, net.cluster()));
  EXPECT_TRUE(t.measured);
  EXPECT_EQ(t.algorithm, Algorithm::kRing);
  EXPECT_NEAR(t.seconds, 10e-3, kTolS);
  EXPECT_EQ(net.measured_used(), std::vector<std::string>{"node allreduce"});
}

// No curve on the rail: a DP group with one member per node keeps the α–β time. 8 nodes of
// stride 8, allreduce of 1 GB: ring 14 · 5 µs + 1e9 · 1.75 / 5e10 = 70 µs + 35 ms = 35.07 ms;
// tree 6 · 5 µs + 2e9 / 5e10 = 30 µs + 40 ms. Ring, not measured.
TEST(Network, MissingCurveFallsBackToTheModel) {
  const Network net(cluster(), Algorithm::kAuto, node_only);
  const CollectiveTime t = net.time(Collective::kAllReduce, kGB, group_shape(8, 8, net.cluster()));
  EXPECT_FALSE(t.measured);
  EXPECT_EQ(t.algorithm, Algorithm::kRing);
  EXPECT_NEAR(t.seconds, 35.07e-3, kTolS);
  EXPECT_TRUE(net.measured_used().empty());
}

// A curve that answers zero is no curve.
TEST(Network, ZeroMeasuredBusbwIsIgnored) {
  const Network net(cluster(), Algorithm::kAuto,
                    [](NetLayer, Collective, double) { return std::optional<double>(0.0); });
  const CollectiveTime t = net.time(Collective::kAllReduce, kGB, group_shape(8, 1, net.cluster()));
  EXPECT_FALSE(t.measured);
  EXPECT_NEAR(t.seconds, 8.778e-3, kTolS);
}

// Hierarchical DP 16 over 2 nodes with the node curve: the two node phases come from the curve,
// 1e9 · 7/8 / 1.75e11 = 5 ms each, the rail phase from the model, 10 µs + 2.5 ms: 12.51 ms.
// The flat ring and tree over the rail keep their α–β times (37.65 ms, 40.04 ms).
TEST(Network, HierarchicalMixesMeasuredAndModelledPhases) {
  const Network net(cluster(), Algorithm::kAuto, node_only);
  const CollectiveTime t = net.time(Collective::kAllReduce, kGB, group_shape(16, 1, net.cluster()));
  EXPECT_EQ(t.algorithm, Algorithm::kHierarchical);
  EXPECT_TRUE(t.measured);
  EXPECT_NEAR(t.seconds, 12.51e-3, kTolS);
  EXPECT_EQ(net.measured_used(),
            (std::vector<std::string>{"node allgather", "node reducescatter"}));
}

}  // namespace
}  // namespace plumb::plan
