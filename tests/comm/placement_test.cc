#include "comm/placement.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace plumb::comm {
namespace {

ClusterMap two_by_two(int ranks_per_node) {
  ClusterMap map;
  map.source = "map.yaml";
  map.ranks_per_node = ranks_per_node;
  map.racks = {{"rack0", {"node0", "node1"}}, {"rack1", {"node2", "node3"}}};
  return map;
}

std::vector<std::vector<int>> ranks_of(const Layer& layer) {
  std::vector<std::vector<int>> out;
  for (const Group& g : layer.groups) out.push_back(g.ranks);
  return out;
}

std::vector<std::string> names_of(const Layer& layer) {
  std::vector<std::string> out;
  for (const Group& g : layer.groups) out.push_back(g.name);
  return out;
}

// 2 racks × 2 nodes × 2 ranks: every layer has groups of 2.
TEST(Layers, TwoRacksTwoNodesTwoRanks) {
  const std::vector<std::string> hosts(8, "box");
  const Placement p = place_by_map(two_by_two(2), hosts);
  ASSERT_EQ(p.ranks.size(), 8u);
  EXPECT_TRUE(p.simulated);
  EXPECT_EQ(p.ranks[5].node, 2);
  EXPECT_EQ(p.ranks[5].local_rank, 1);
  EXPECT_EQ(p.nodes[2].rack, 1);
  EXPECT_EQ(p.nodes[3].position, 1);

  const std::vector<std::string> names = {"world", "node", "rail", "spine"};
  const std::vector<Layer> layers = make_layers(p, names);
  ASSERT_EQ(layers.size(), 4u);
  for (const Layer& l : layers) EXPECT_EQ(l.skipped, "") << l.name;
  EXPECT_EQ(ranks_of(layers[0]), (std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(ranks_of(layers[1]), (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(names_of(layers[1]), (std::vector<std::string>{"node0", "node1", "node2", "node3"}));
  // rail: same local rank, nodes of one rack
  EXPECT_EQ(ranks_of(layers[2]), (std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(names_of(layers[2]),
            (std::vector<std::string>{"rack0/rail0", "rack0/rail1", "rack1/rail0", "rack1/rail1"}));
  // spine: same local rank and position in rack, one rank per rack
  EXPECT_EQ(ranks_of(layers[3]), (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(names_of(layers[3]),
            (std::vector<std::string>{"pos0/rail0", "pos0/rail1", "pos1/rail0", "pos1/rail1"}));
  EXPECT_EQ(group_of(layers[3], 6), 2);
}

TEST(Layers, SkipsRepeatsAndSingletons) {
  const std::vector<std::string> hosts = {"a", "a", "a", "a"};
  const std::vector<int> ids = {0, 0, 0, 0};
  const Placement p = place_by_host(hosts, ids);
  const std::vector<std::string> names = {"world", "node", "rail", "spine"};
  const std::vector<Layer> layers = make_layers(p, names);
  EXPECT_EQ(layers[0].skipped, "");
  EXPECT_EQ(layers[1].skipped, "same groups as layer 'world'");
  EXPECT_EQ(layers[2].skipped, "every group has a single rank");
  EXPECT_EQ(layers[3].skipped, "every group has a single rank");
}

TEST(Layers, UnknownName) {
  const std::vector<std::string> names = {"world", "spin"};
  try {
    make_layers(Placement{}, names);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--layers: unknown layer 'spin' (did you mean 'spine'?); expected one of "
                           "world, node, rail, spine");
  }
}

TEST(Placement, ByHostNameWithFullyQualifiedNames) {
  ClusterMap map = two_by_two(0);
  const std::vector<std::string> hosts = {"node1.example.org", "node0", "node1", "node3"};
  const Placement p = place_by_map(map, hosts);
  EXPECT_FALSE(p.simulated);
  EXPECT_EQ(p.ranks[0].node, 1);
  EXPECT_EQ(p.ranks[0].local_rank, 0);
  EXPECT_EQ(p.ranks[2].node, 1);
  EXPECT_EQ(p.ranks[2].local_rank, 1);
  EXPECT_EQ(p.ranks[3].node, 3);
}

TEST(Placement, MoreRanksThanTheMapDescribes) {
  const std::vector<std::string> hosts(10, "box");
  try {
    place_by_map(two_by_two(2), hosts);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "map.yaml: describes 8 ranks (4 nodes × ranks_per_node 2) but 10 ranks "
                           "are running");
  }
}

TEST(Placement, HostsMissingFromTheMap) {
  const std::vector<std::string> hosts = {"node0", "gpu-7", "gpu-7"};
  try {
    place_by_map(two_by_two(0), hosts);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "map.yaml: 2 of 3 ranks run on hosts the map does not list: rank 1 on "
                           "host 'gpu-7', rank 2 on host 'gpu-7'");
  }
}

TEST(Placement, ByHostGroupsSharedMemoryDomains) {
  const std::vector<std::string> hosts = {"h0", "h0", "h1", "h1"};
  const std::vector<int> ids = {0, 0, 2, 2};
  const Placement p = place_by_host(hosts, ids);
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.nodes[1].name, "h1");
  EXPECT_EQ(p.ranks[3].local_rank, 1);
  const std::vector<std::string> names = {"node", "rail"};
  const std::vector<Layer> layers = make_layers(p, names);
  EXPECT_EQ(ranks_of(layers[0]), (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(ranks_of(layers[1]), (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
}

}  // namespace
}  // namespace plumb::comm
