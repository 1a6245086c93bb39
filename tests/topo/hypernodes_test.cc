#include <gtest/gtest.h>

#include "common/error.h"
#include "common/yaml_strict.h"
#include "topo/site_topology.h"

namespace plumb::topo {
namespace {

const std::string kHyperNodes = std::string(PLUMB_TEST_FIXTURES) + "/topo/hypernodes-3tier.yaml";
const std::string kNodes = std::string(PLUMB_TEST_FIXTURES) + "/topo/k8s-nodes-8.json";

ImportOptions with_nodes() {
  ImportOptions options;
  options.nodes = parse_k8s_nodes(read_text_file(kNodes, "t"), "k8s-nodes-8.json");
  return options;
}

std::string error_of(std::string_view yaml, const ImportOptions& options = {}) {
  try {
    read_hypernodes(yaml, "hn.yaml", options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(HyperNodes, ReadsExactRegexAndLabelMembersWithTheNodeList) {
  const SiteTopology site = read_hypernodes(read_text_file(kHyperNodes, "t"), "hn.yaml", with_nodes());
  ASSERT_EQ(site.switches.size(), 7u);
  EXPECT_EQ(site.switches[0].nodes, (std::vector<std::string>{"node0", "node1"}));
  EXPECT_EQ(site.switches[1].nodes, (std::vector<std::string>{"node2", "node3"}));  // regexMatch
  EXPECT_EQ(site.switches[2].nodes, (std::vector<std::string>{"node4", "node5"}));  // labelMatch
  EXPECT_EQ(site.switches[6].switches, (std::vector<std::string>{"s4", "s5"}));
  EXPECT_EQ(site.switches[6].line, 75);
  EXPECT_EQ(site_tiers(site).at("s6"), 3);
  EXPECT_TRUE(site.notes.empty());
}

TEST(HyperNodes, RegexAndLabelMembersNeedTheNodeList) {
  EXPECT_EQ(error_of(read_text_file(kHyperNodes, "t")),
            "hn.yaml:29: HyperNode 's1': a member selects nodes by regexMatch; give the node list "
            "with --nodes FILE (kubectl get nodes -o json) to resolve it\n"
            "hn.yaml:41: HyperNode 's2': a member selects nodes by labelMatch; give the node list "
            "with --nodes FILE (kubectl get nodes -o json) to resolve it");
}

// Volcano matches regexMatch with Go's regexp, whose syntax is RE2's: what RE2 refuses (here a
// lookahead) is a problem at the pattern's line, with RE2's reason.
TEST(HyperNodes, RegexMatchPatternsAreRe2) {
  EXPECT_EQ(error_of(R"yaml(apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: s0}
spec:
  tier: 1
  members:
    - type: Node
      selector:
        regexMatch: {pattern: "node(?=[0-3])"}
)yaml",
                     with_nodes()),
            "hn.yaml:9: HyperNode 's0': regexMatch pattern 'node(?=[0-3])': not a valid regular "
            "expression (invalid perl operator: (?=)");
}

TEST(HyperNodes, WritesATreeThatReadsBack) {
  const SiteTopology site = read_hypernodes(read_text_file(kHyperNodes, "t"), "hn.yaml", with_nodes());
  const std::string text = write_hypernodes(site);
  EXPECT_NE(text.find("---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata:\n"
                      "  name: s6\nspec:\n  tier: 3\n  members:\n    - type: HyperNode\n"
                      "      selector:\n        exactMatch:\n          name: s4\n"),
            std::string::npos)
      << text;
  const SiteTopology again = read_hypernodes(text, "again.yaml", {});
  ASSERT_EQ(again.switches.size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(again.switches[i].name, site.switches[i].name);
    EXPECT_EQ(again.switches[i].nodes, site.switches[i].nodes);
    EXPECT_EQ(again.switches[i].switches, site.switches[i].switches);
  }
}

TEST(HyperNodes, AListAndSkippedTiers) {
  const SiteTopology site = read_hypernodes(R"(apiVersion: v1
kind: List
items:
  - apiVersion: topology.volcano.sh/v1alpha1
    kind: HyperNode
    metadata: {name: leaf, uid: abc}
    spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: n1}}}]}
    status: {nodeCount: 1}
  - apiVersion: topology.volcano.sh/v1alpha1
    kind: HyperNode
    metadata: {name: top}
    spec: {tier: 3, tierName: volcano.sh/hypercluster, members: [{type: HyperNode, selector: {exactMatch: {name: leaf}}}]}
)",
                                            "list.yaml", {});
  ASSERT_EQ(site.switches.size(), 2u);
  EXPECT_EQ(site.notes, (std::vector<std::string>{"the file's tiers skip levels; plumb topo export "
                                                  "numbers them from the leaves up (tier 1, 2, ...)"}));
}

TEST(HyperNodes, ProblemsNameTheLineAndTheHyperNode) {
  EXPECT_EQ(error_of(R"(apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: a}
spec:
  tier: 2
  members:
    - {type: HyperNode, selector: {exactMatch: {name: b}}}
    - {type: Rack, selector: {exactMatch: {name: c}}}
    - {type: HyperNode, selector: {regexMatch: {pattern: "x"}}}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: b}
spec:
  tier: 2
  members:
    - {type: HyperNode, selector: {exactMatch: {name: a}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: d}
spec: {tier: 0, memebers: []}
)"),
            "hn.yaml:8: HyperNode 'a': member type must be Node or HyperNode, got 'Rack'\n"
            "hn.yaml:9: HyperNode 'a': a HyperNode member is named by exactMatch, not regexMatch\n"
            "hn.yaml:19: expected apiVersion topology.volcano.sh/v1alpha1 and kind HyperNode, got "
            "'v1' and 'ConfigMap'\n"
            "hn.yaml:26: HyperNode 'd': unknown key 'memebers' in spec (did you mean 'members'?); "
            "expected one of tier, tierName, members");
  EXPECT_EQ(error_of(R"(apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: a}
spec: {tier: 2, members: [{type: HyperNode, selector: {exactMatch: {name: b}}}]}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: b}
spec: {tier: 1, members: [{type: HyperNode, selector: {exactMatch: {name: a}}}]}
)"),
            "hn.yaml:1: HyperNode 'a': switches form a cycle: a -> b -> a");
}

TEST(HyperNodes, TheExportRefusesWhatVolcanoCannotHold) {
  SiteTopology site;
  site.source = "map.yaml";
  site.switches = {{"leaf", {"n1"}, {}, 0, "rack 'leaf'"},
                   {"spine1", {}, {"leaf"}, 0, "switch 'spine1'"},
                   {"spine2", {}, {"leaf"}, 0, "switch 'spine2'"}};
  try {
    write_hypernodes(site);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "switch 'leaf' is under spine1 and spine2: Volcano's HyperNodes form a "
                           "tree, each member under one parent");
  }
  site.switches = {{"Leaf_1", {"n1"}, {}, 0, "rack 'Leaf_1'"}};
  try {
    write_hypernodes(site);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "switch 'Leaf_1' is not a Kubernetes object name (lower-case letters, "
                           "digits, '-' and '.', at most 253)");
  }
}

}  // namespace
}  // namespace plumb::topo
