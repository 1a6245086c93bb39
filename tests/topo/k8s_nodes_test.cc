#include <gtest/gtest.h>

#include "common/error.h"
#include "common/yaml_strict.h"
#include "topo/site_topology.h"

namespace plumb::topo {
namespace {

const std::string kNodes = std::string(PLUMB_TEST_FIXTURES) + "/topo/k8s-nodes-8.json";

SiteTopology import(std::string_view json, const ImportOptions& options = {}) {
  return site_from_k8s_nodes(parse_k8s_nodes(json, "nodes.json"), "nodes.json", options);
}

std::string error_of(std::string_view json, const ImportOptions& options = {}) {
  try {
    import(json, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Two nodes with the given labels (a JSON object's members), kubectl's List shape.
std::string two_nodes(const std::string& labels0, const std::string& labels1) {
  return R"({"kind": "List", "items": [
    {"metadata": {"name": "n0", "labels": {)" + labels0 + R"(}}},
    {"metadata": {"name": "n1", "labels": {)" + labels1 + R"(}}}]})";
}

TEST(K8sNodes, ReadsNamesLabelsAndDevicesOnly) {
  const std::vector<K8sNode> nodes = parse_k8s_nodes(read_text_file(kNodes, "t"), "k8s-nodes-8.json");
  ASSERT_EQ(nodes.size(), 8u);
  EXPECT_EQ(nodes[3].name, "node3");
  EXPECT_EQ(nodes[3].labels.at("volcano.sh/hypernode"), "s1");
  EXPECT_EQ(nodes[3].devices, (NodeDevices{{"nvidia.com/gpu", 8}}));  // cpu, memory, pods left out
  EXPECT_EQ(nodes[7].devices.at("nvidia.com/gpu"), 4);
  EXPECT_EQ(nodes[7].where, "items[7] (node 'node7')");
}

TEST(K8sNodes, VolcanoA3LabelsByDefault) {
  const SiteTopology site =
      site_from_k8s_nodes(parse_k8s_nodes(read_text_file(kNodes, "t"), "n.json"), "n.json", {});
  ASSERT_EQ(site.switches.size(), 6u);
  EXPECT_EQ(site.switches[0].name, "s0");
  EXPECT_EQ(site.switches[0].nodes, (std::vector<std::string>{"node0", "node1"}));
  EXPECT_EQ(site.switches[1].name, "s4");
  EXPECT_EQ(site.switches[1].label, "volcano.sh/hypercluster=s4");
  EXPECT_EQ(site.switches[1].switches, (std::vector<std::string>{"s0", "s1"}));
  EXPECT_EQ(site.notes, (std::vector<std::string>{
                            "racks from label volcano.sh/hypernode, tiers above from volcano.sh/hypercluster"}));
  EXPECT_EQ(device_summary(site),
            (std::vector<std::string>{"nvidia.com/gpu: 4 on 1 node", "nvidia.com/gpu: 8 on 7 nodes"}));
}

TEST(K8sNodes, LabelsGivenByFlags) {
  ImportOptions options;
  options.rack_label = "topology.kubernetes.io/zone";
  const SiteTopology site =
      site_from_k8s_nodes(parse_k8s_nodes(read_text_file(kNodes, "t"), "n.json"), "n.json", options);
  ASSERT_EQ(site.switches.size(), 1u);
  EXPECT_EQ(site.switches[0].name, "zone-a");
  EXPECT_EQ(site.node_count(), 8u);

  options.rack_label = "rack";
  options.tier_labels = {"row", "hall"};
  const SiteTopology three = import(two_nodes(R"("rack": "r0", "row": "w0", "hall": "h")",
                                              R"("rack": "r1", "row": "w0", "hall": "h")"),
                                    options);
  EXPECT_EQ(site_summary(three), "2 nodes under 2 leaf switches, 2 switches above them (tiers 1-3)");
}

TEST(K8sNodes, VolcanoA2AndTopographFamilies) {
  const SiteTopology a2 = import(two_nodes(R"("volcano.sh/tor": "tor1")", R"("volcano.sh/tor": "tor1")"));
  EXPECT_EQ(a2.switches.size(), 1u);
  const SiteTopology nv = import(two_nodes(
      R"("network.topology.nvidia.com/leaf": "l0", "network.topology.nvidia.com/spine": "sp")",
      R"("network.topology.nvidia.com/leaf": "l1", "network.topology.nvidia.com/spine": "sp")"));
  EXPECT_EQ(site_summary(nv), "2 nodes under 2 leaf switches, 1 switch above them (tiers 1-2)");
}

TEST(K8sNodes, ProblemsNameTheNode) {
  ImportOptions options;
  options.rack_label = "rack";
  options.tier_labels = {"row"};
  EXPECT_EQ(error_of(two_nodes(R"("rack": "r0", "row": "w0")", R"("rack": "r0", "row": "w1")"), options),
            "nodes.json: items[1] (node 'n1'): rack=r0 is under row=w1, but node 'n0' puts it under row=w0");
  EXPECT_EQ(error_of(two_nodes(R"("rack": "r0", "row": "w0")", R"("rack": "r1")"), options),
            "nodes.json: items[1] (node 'n1'): no label 'row'");
  EXPECT_EQ(error_of(two_nodes(R"("a": "b")", R"("a": "b")")),
            "nodes.json: no node carries a rack label plumb knows (volcano.sh/hypernode, "
            "volcano.sh/tor, network.topology.nvidia.com/leaf, topology.kubernetes.io/zone); "
            "name yours with --rack-label KEY");
  EXPECT_EQ(error_of(R"({"items": [{"metadata": {"name": "n0"}, "status": {"capacity": {"nvidia.com/gpu": "x"}}},
                                   {"metadata": {"name": "n0"}}, {"spec": {}}]})"),
            "nodes.json: items[0] (node 'n0'): status.capacity.nvidia.com/gpu: expected a whole number "
            "of devices, got 'x'\n"
            "nodes.json: items[2]: expected a Node with metadata.name\n"
            "nodes.json: items[1] (node 'n0'): the node is listed twice");
  EXPECT_EQ(error_of("{\"items\": [}"),
            "nodes.json: not valid JSON: parse error at line 1, column 12: syntax error while parsing "
            "value - unexpected '}'; expected "
            "'[', '{', or a literal");
  EXPECT_EQ(error_of("[]"), "nodes.json: expected the output of kubectl get nodes -o json (an object with 'items')");
}

}  // namespace
}  // namespace plumb::topo
