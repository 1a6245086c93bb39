#include "comm/cluster_map.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace plumb::comm {
namespace {

std::string error_of(std::string_view yaml) {
  try {
    parse_cluster_map(yaml, "map.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ClusterMap, ParsesRacksAndNodes) {
  const ClusterMap map = parse_cluster_map(R"(
ranks_per_node: 2
racks:
  - name: rack0
    nodes: [node0, node1]
  - name: rack1
    nodes:
      - node2
      - node3
)",
                                           "map.yaml");
  EXPECT_EQ(map.source, "map.yaml");
  EXPECT_EQ(map.ranks_per_node, 2);
  ASSERT_EQ(map.racks.size(), 2u);
  EXPECT_EQ(map.racks[1].name, "rack1");
  EXPECT_EQ(map.racks[1].nodes, (std::vector<std::string>{"node2", "node3"}));
  EXPECT_EQ(map.node_count(), 4u);
}

TEST(ClusterMap, WithoutRanksPerNodeMatchesHosts) {
  const ClusterMap map = parse_cluster_map("racks:\n  - {name: r, nodes: [a]}\n", "m");
  EXPECT_EQ(map.ranks_per_node, 0);
}

TEST(ClusterMap, ReportsEveryProblemWithItsLine) {
  EXPECT_EQ(error_of(R"(rank_per_node: 2
racks:
  - name: rack0
    nodes: [node0, node1]
  - name: rack1
    nodes: [node1]
    switch: s1
)"),
            "map.yaml:1: unknown key 'rank_per_node' in the cluster map (did you mean "
            "'ranks_per_node'?); expected one of racks, ranks_per_node, switches\n"
            "map.yaml:6: node 'node1' is listed twice (first at line 4)\n"
            "map.yaml:7: unknown key 'switch' in a rack; expected one of name, nodes");
}

// Issue 10: a repeated key kept its first value (a second 'nodes' list was silently dropped).
TEST(ClusterMap, DuplicateKeysAreErrors) {
  EXPECT_EQ(error_of(R"(racks:
  - name: rack0
    nodes: [node0]
    nodes: [node1]
ranks_per_node: 2
ranks_per_node: 4
)"),
            "map.yaml:4: duplicate key 'nodes' (first at line 3)\n"
            "map.yaml:6: duplicate key 'ranks_per_node' (first at line 5)");
}

TEST(ClusterMap, BadValues) {
  EXPECT_EQ(error_of("ranks_per_node: two\nracks: [{name: r, nodes: [a]}]\n"),
            "map.yaml:1: ranks_per_node must be a whole number from 1 to 1000000, got 'two'");
  EXPECT_EQ(error_of("ranks_per_node: 0\nracks: [{name: r, nodes: [a]}]\n"),
            "map.yaml:1: ranks_per_node must be a whole number from 1 to 1000000, got '0'");
  EXPECT_EQ(error_of("ranks_per_node: 1e300\nracks: [{name: r, nodes: [a]}]\n"),
            "map.yaml:1: ranks_per_node must be a whole number from 1 to 1000000, got '1e300'");
  EXPECT_EQ(error_of("ranks_per_node: [2]\nracks: [{name: r, nodes: [a]}]\n"),
            "map.yaml:1: ranks_per_node must be a whole number from 1 to 1000000, got a list");
  EXPECT_EQ(error_of("racks: []\n"), "map.yaml:1: expected 'racks': a non-empty list of racks");
  EXPECT_EQ(error_of("racks:\n  - name: r\n"),
            "map.yaml:2: rack 'r' needs 'nodes': a non-empty list of host names");
  EXPECT_EQ(error_of("racks:\n  - nodes: [a]\n  - name: b\n    nodes: [[x]]\n"),
            "map.yaml:2: rack 1 needs a 'name'\nmap.yaml:4: a node must be a host name (a string)");
  EXPECT_EQ(error_of("racks:\n  - {name: r, nodes: [a]}\n  - {name: r, nodes: [b]}\n"),
            "map.yaml:3: rack name 'r' is used twice (first at line 2)");
  EXPECT_EQ(error_of("- a\n- b\n"),
            "map.yaml:1: expected a map with a 'racks' list (see docs/comm.md, \"Cluster map\")");
  EXPECT_EQ(error_of(""),
            "map.yaml: expected a map with a 'racks' list (see docs/comm.md, \"Cluster map\")");
}

TEST(ClusterMap, YamlSyntaxErrorNamesTheLine) {
  EXPECT_EQ(error_of("racks:\n  - name: r\n    nodes: [a, b\n"),
            "map.yaml:4: not valid YAML: end of sequence flow not found");
}

TEST(ClusterMap, MissingFile) {
  try {
    load_cluster_map("/nonexistent/map.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/map.yaml: cannot read the cluster map: No such file or directory");
  }
}

TEST(ClusterMap, DirectoryIsOneLine) {
  try {
    load_cluster_map("/tmp");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/tmp: is a directory, not a cluster map");
  }
}

// Issue 17: the switch tiers above the racks (a spine over leaf switches), as topo import writes them.
TEST(ClusterMap, SwitchesAboveTheRacks) {
  const ClusterMap map = parse_cluster_map(R"(racks:
  - {name: leaf1, nodes: [a]}
  - {name: leaf2, nodes: [b]}
switches:
  - {name: spine1, racks: [leaf1, leaf2]}
  - {name: spine2, racks: [leaf1, leaf2]}
  - {name: core, switches: [spine1, spine2]}
)",
                                           "map.yaml");
  ASSERT_EQ(map.switches.size(), 3u);
  EXPECT_EQ(map.switches[0].racks, (std::vector<std::string>{"leaf1", "leaf2"}));
  EXPECT_EQ(map.switches[2].switches, (std::vector<std::string>{"spine1", "spine2"}));
}

TEST(ClusterMap, SwitchProblemsWithTheirLines) {
  EXPECT_EQ(error_of(R"(racks:
  - {name: leaf1, nodes: [a]}
switches:
  - {name: spine1, racks: [leaf1, leaf9], switches: [spine3]}
  - {name: leaf1, racks: [leaf1]}
  - {name: spine2}
  - {name: spine1, racks: [leaf1], swiches: [x]}
)"),
            "map.yaml:6: switch 'spine2' needs 'racks' or 'switches': the names directly below it\n"
            "map.yaml:7: unknown key 'swiches' in a switch (did you mean 'switches'?); expected one "
            "of name, racks, switches");
  EXPECT_EQ(error_of(R"(racks:
  - {name: leaf1, nodes: [a]}
switches:
  - {name: spine1, racks: [leaf1, leaf9], switches: [spine3]}
  - {name: leaf1, racks: [leaf1]}
  - {name: spine1, racks: [leaf1]}
)"),
            "map.yaml:4: switch 'spine1': rack 'leaf9' is not defined\n"
            "map.yaml:4: switch 'spine1': switch 'spine3' is not defined\n"
            "map.yaml:5: switch 'leaf1': the name is also a rack's\n"
            "map.yaml:6: switch name 'spine1' is used twice (first at line 4)");
  EXPECT_EQ(error_of(R"(racks:
  - {name: leaf1, nodes: [a]}
switches:
  - {name: s1, racks: [leaf1, leaf1], switches: [s2]}
  - {name: s2, switches: [s1]}
)"),
            "map.yaml:4: switch 's1': lists switch 'leaf1' twice\n"
            "map.yaml:4: switch 's1': switches form a cycle: s1 -> s2 -> s1");
}

TEST(ClusterMap, FormatReadsBackToTheSameMap) {
  ClusterMap map;
  map.ranks_per_node = 8;
  map.racks = {{"leaf 1", {"gpu-001", "yes", "#x"}}, {"leaf2", {"b"}}};
  map.switches = {{"spine", {"leaf 1", "leaf2"}, {}}, {"core", {}, {"spine"}}};
  const std::vector<std::string> comments = {"made by a test", "two\nlines"};
  const std::string text = format_cluster_map(map, comments);
  EXPECT_EQ(text.rfind("# made by a test\n# two lines\nranks_per_node: 8\n", 0), 0u) << text;
  const ClusterMap again = parse_cluster_map(text, "again.yaml");
  EXPECT_EQ(again.ranks_per_node, 8);
  ASSERT_EQ(again.racks.size(), 2u);
  EXPECT_EQ(again.racks[0].name, "leaf 1");
  EXPECT_EQ(again.racks[0].nodes, map.racks[0].nodes);
  ASSERT_EQ(again.switches.size(), 2u);
  EXPECT_EQ(again.switches[0].racks, map.switches[0].racks);
  EXPECT_EQ(again.switches[1].switches, map.switches[1].switches);
  EXPECT_EQ(format_cluster_map(again, comments), text);
}

}  // namespace
}  // namespace plumb::comm
