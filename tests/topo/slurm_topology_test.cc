#include <gtest/gtest.h>

#include "common/error.h"
#include "common/yaml_strict.h"
#include "topo/site_topology.h"

namespace plumb::topo {
namespace {

const std::string kFatTree = std::string(PLUMB_TEST_FIXTURES) + "/topo/fat-tree-512.conf";

std::string error_of(std::string_view text) {
  try {
    read_slurm_topology(text, "topology.conf");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SlurmTopology, ReadsTheFatTreeFixture) {
  const SiteTopology site = read_slurm_topology(read_text_file(kFatTree, "t"), "fat-tree-512.conf");
  ASSERT_EQ(site.switches.size(), 18u);
  EXPECT_EQ(site.node_count(), 512u);
  EXPECT_EQ(site.switches[0].name, "spine01");
  EXPECT_EQ(site.switches[0].line, 6);
  EXPECT_EQ(site.switches[1].name, "spine02");
  EXPECT_EQ(site.switches[1].line, 7);  // the continued line counts from its start
  EXPECT_EQ(site.switches[1].switches, site.switches[0].switches);
  EXPECT_EQ(site.switches[1].switches.size(), 16u);
  const SiteSwitch& leaf05 = site.switches[6];  // lower-case parameter names
  EXPECT_EQ(leaf05.name, "leaf05");
  ASSERT_EQ(leaf05.nodes.size(), 32u);
  EXPECT_EQ(leaf05.nodes.front(), "gpu129");
  EXPECT_EQ(leaf05.nodes.back(), "gpu160");
  const SiteSwitch& leaf16 = site.switches.back();
  ASSERT_EQ(leaf16.nodes.size(), 32u);
  EXPECT_EQ(leaf16.nodes.back(), "gpu512");
  const auto tiers = site_tiers(site);
  EXPECT_EQ(tiers.at("leaf01"), 1);
  EXPECT_EQ(tiers.at("spine02"), 2);
  EXPECT_EQ(site_parents(site).at("leaf07"), (std::vector<std::string>{"spine01", "spine02"}));
  EXPECT_EQ(site_summary(site), "512 nodes under 16 leaf switches, 2 switches above them (tiers 1-2)");
}

TEST(SlurmTopology, WritesWhatItReadsBack) {
  const SiteTopology site = read_slurm_topology(read_text_file(kFatTree, "t"), "fat-tree-512.conf");
  const std::string text = write_slurm_topology(site);
  EXPECT_NE(text.find("\nSwitchName=leaf05 Nodes=gpu[129-160]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nSwitchName=spine02 Switches=leaf[01-16]\n"), std::string::npos) << text;
  // leaves before the spines above them
  EXPECT_LT(text.find("SwitchName=leaf16"), text.find("SwitchName=spine01"));
  const SiteTopology again = read_slurm_topology(text, "again.conf");
  ASSERT_EQ(again.switches.size(), site.switches.size());
  // The same lines after the two header lines (the second names the source).
  const auto body = [](const std::string& t) { return t.substr(t.find('\n', t.find('\n') + 1)); };
  EXPECT_EQ(body(write_slurm_topology(again)), body(text));
}

TEST(SlurmTopology, CommentsContinuationsAndLinkSpeed) {
  const SiteTopology site = read_slurm_topology(
      "# a comment\n"
      "SwitchName=s1 Nodes=n[1-2],\\\n"
      "   n3 LinkSpeed=100 # trailing\n"
      "\n"
      "SWITCHNAME=top SWITCHES=s1\n",
      "t.conf");
  ASSERT_EQ(site.switches.size(), 2u);
  EXPECT_EQ(site.switches[0].nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(site.switches[1].line, 5);
  EXPECT_EQ(site.switches[1].switches, (std::vector<std::string>{"s1"}));
}

TEST(SlurmTopology, BadHostlistNamesFileLineSwitchAndPart) {
  EXPECT_EQ(error_of("SwitchName=s0 Nodes=node[01-16]\n"
                     "SwitchName=s1 Nodes=node[17-1x]\n"),
            "topology.conf:2: SwitchName=s1: Nodes=node[17-1x]: bad range '17-1x' in a hostlist "
            "(expected numbers such as 01-16)");
}

TEST(SlurmTopology, CyclesAndUndefinedSwitches) {
  EXPECT_EQ(error_of("SwitchName=a Switches=b\n"
                     "SwitchName=b Switches=c\n"
                     "SwitchName=c Switches=a,leaf9\n"
                     "SwitchName=leaf1 Nodes=n1\n"),
            "topology.conf:1: SwitchName=a: switches form a cycle: a -> b -> c -> a\n"
            "topology.conf:3: SwitchName=c: switch 'leaf9' is not defined");
  EXPECT_EQ(error_of("SwitchName=s Switches=s\n"), "topology.conf:1: SwitchName=s: switches form a cycle: s -> s");
}

TEST(SlurmTopology, NodeUnderTwoLeavesAndOtherShapes) {
  EXPECT_EQ(error_of("SwitchName=l1 Nodes=n[1-4]\n"
                     "SwitchName=l2 Nodes=n[4-5],n5\n"
                     "SwitchName=l1 Nodes=m1\n"
                     "SwitchName=mixed Nodes=m2 Switches=l2\n"
                     "SwitchName=empty LinkSpeed=1\n"),
            "topology.conf:2: SwitchName=l2: node 'n4' is already under SwitchName=l1 (line 1)\n"
            "topology.conf:2: SwitchName=l2: lists node 'n5' twice\n"
            "topology.conf:3: SwitchName=l1: 'l1' is defined twice (first at line 1)\n"
            "topology.conf:4: SwitchName=mixed: holds both nodes and switches; a switch holds one or the other\n"
            "topology.conf:5: SwitchName=empty: holds no nodes and no switches");
}

TEST(SlurmTopology, SyntaxProblemsAllAtOnce) {
  EXPECT_EQ(error_of("SwitchName=s1 Nodez=n1\n"
                     "Nodes=n2\n"
                     "BlockName=b1 Nodes=n[1-4]\n"
                     "SwitchName=s2 Nodes=n3 Nodes=n4\n"
                     "SwitchName=s3 stray\n"
                     "SwitchName=s4 Nodes=\n"),
            "topology.conf:1: unknown parameter 'Nodez' (did you mean 'Nodes'?); expected one of "
            "SwitchName, Switches, Nodes, LinkSpeed\n"
            "topology.conf:2: expected SwitchName=<name> on every line\n"
            "topology.conf:3: BlockName= belongs to the topology/block plugin; plumb reads the "
            "topology/tree plugin's SwitchName= lines\n"
            "topology.conf:4: Nodes= is given twice\n"
            "topology.conf:5: expected Name=value, got 'stray'\n"
            "topology.conf:6: SwitchName=s4: Nodes= is empty");
  EXPECT_EQ(error_of("# nothing\n"), "topology.conf: defines no switch");
}

}  // namespace
}  // namespace plumb::topo
