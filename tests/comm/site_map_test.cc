// Issue 17's round trips: a site's file -> cluster map -> the site's format -> cluster map gives the
// same map, through the YAML the map is written as.
#include "comm/site_map.h"

#include <gtest/gtest.h>

#include "common/yaml_strict.h"

namespace plumb::comm {
namespace {

const std::string kFixtures = std::string(PLUMB_TEST_FIXTURES) + "/topo/";

// Through the file plumb comm --cluster reads.
ClusterMap through_yaml(const ClusterMap& map) {
  return parse_cluster_map(format_cluster_map(map), "map.yaml");
}

void expect_same(const ClusterMap& a, const ClusterMap& b) {
  ASSERT_EQ(a.racks.size(), b.racks.size());
  for (size_t i = 0; i < a.racks.size(); ++i) {
    EXPECT_EQ(a.racks[i].name, b.racks[i].name);
    EXPECT_EQ(a.racks[i].nodes, b.racks[i].nodes) << a.racks[i].name;
  }
  ASSERT_EQ(a.switches.size(), b.switches.size());
  for (size_t i = 0; i < a.switches.size(); ++i) {
    EXPECT_EQ(a.switches[i].name, b.switches[i].name);
    EXPECT_EQ(a.switches[i].racks, b.switches[i].racks) << a.switches[i].name;
    EXPECT_EQ(a.switches[i].switches, b.switches[i].switches) << a.switches[i].name;
  }
}

TEST(SiteMap, SlurmFatTreeBecomesSixteenRacksUnderTwoSpines) {
  const topo::SiteTopology site =
      topo::read_slurm_topology(read_text_file(kFixtures + "fat-tree-512.conf", "t"), "fat-tree-512.conf");
  const ClusterMap map = through_yaml(cluster_map_from_site(site));
  ASSERT_EQ(map.racks.size(), 16u);
  EXPECT_EQ(map.node_count(), 512u);
  EXPECT_EQ(map.racks[0].name, "leaf01");
  EXPECT_EQ(map.racks[0].nodes.front(), "gpu001");
  EXPECT_EQ(map.racks[15].nodes.back(), "gpu512");
  ASSERT_EQ(map.switches.size(), 2u);
  EXPECT_EQ(map.switches[1].name, "spine02");
  EXPECT_EQ(map.switches[1].racks.size(), 16u);
  EXPECT_TRUE(map.switches[1].switches.empty());
}

TEST(SiteMap, SlurmRoundTrip) {
  const ClusterMap first = through_yaml(cluster_map_from_site(
      topo::read_slurm_topology(read_text_file(kFixtures + "fat-tree-512.conf", "t"), "in.conf")));
  const std::string conf = topo::write_slurm_topology(site_from_cluster_map(first));
  expect_same(first, through_yaml(cluster_map_from_site(topo::read_slurm_topology(conf, "out.conf"))));
}

TEST(SiteMap, HyperNodesRoundTrip) {
  topo::ImportOptions options;
  options.nodes = topo::parse_k8s_nodes(read_text_file(kFixtures + "k8s-nodes-8.json", "t"), "nodes.json");
  const ClusterMap first = through_yaml(cluster_map_from_site(topo::read_hypernodes(
      read_text_file(kFixtures + "hypernodes-3tier.yaml", "t"), "in.yaml", options)));
  ASSERT_EQ(first.racks.size(), 4u);
  EXPECT_EQ(first.switches.size(), 3u);
  const std::string yaml = topo::write_hypernodes(site_from_cluster_map(first));
  expect_same(first, through_yaml(cluster_map_from_site(topo::read_hypernodes(yaml, "out.yaml", {}))));
}

// Kubernetes labels and Volcano HyperNodes describe the same tree: the labels' map, exported as
// HyperNodes and read back, is the map the HyperNodes of Volcano's guide give.
TEST(SiteMap, KubernetesLabelsExportedAsHyperNodes) {
  const ClusterMap labels = through_yaml(cluster_map_from_site(topo::site_from_k8s_nodes(
      topo::parse_k8s_nodes(read_text_file(kFixtures + "k8s-nodes-8.json", "t"), "n.json"), "n.json", {})));
  ASSERT_EQ(labels.racks.size(), 4u);
  EXPECT_EQ(labels.racks[2].nodes, (std::vector<std::string>{"node4", "node5"}));
  ASSERT_EQ(labels.switches.size(), 2u);
  EXPECT_EQ(labels.switches[1].racks, (std::vector<std::string>{"s2", "s3"}));
  const std::string yaml = topo::write_hypernodes(site_from_cluster_map(labels));
  expect_same(labels, through_yaml(cluster_map_from_site(topo::read_hypernodes(yaml, "hn.yaml", {}))));
}

}  // namespace
}  // namespace plumb::comm
