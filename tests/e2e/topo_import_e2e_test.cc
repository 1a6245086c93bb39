// plumb topo import / export end to end (issue 17): the real binary reads a site's topology file,
// writes a cluster map, and plumb comm --cluster runs on it under the real mpirun.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <climits>
#include <sstream>

#include "support/subprocess.h"

namespace plumb {
namespace {

using test::run_command;

const std::string kPlumb = PLUMB_BIN;
const std::string kFatTree = std::string(PLUMB_TEST_FIXTURES) + "/topo/fat-tree-512.conf";

std::string this_host() {
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, sizeof name);
  return name;
}

// The map without its comment lines (the first names the file it came from).
std::string without_comments(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) != 0) out += line + "\n";
  }
  return out;
}

// The issue's acceptance: 2 spines, 16 leaves, 512 nodes; plumb comm accepts the map.
TEST(TopoImportE2E, FatTreeOf512NodesRunsUnderPlumbComm) {
  const std::string dir = test::temp_dir("topo-import");
  const test::Run imported = run_command(kPlumb + " topo import --from slurm-topology " + kFatTree +
                                         " --ranks-per-node 2 -o " + dir + "/map.yaml");
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(imported.out, "");
  EXPECT_EQ(imported.err, "plumb: " + kFatTree +
                              ": 512 nodes under 16 leaf switches, 2 switches above them (tiers 1-2)\n"
                              "plumb: wrote " + dir + "/map.yaml\n");
  const std::string map = test::read_file(dir + "/map.yaml");
  EXPECT_NE(map.find("ranks_per_node: 2\nracks:\n  - name: leaf01\n    nodes: [gpu001, gpu002, "),
            std::string::npos)
      << map;
  EXPECT_NE(map.find("  - name: spine02\n    racks: [leaf01, leaf02, "), std::string::npos) << map;

  // 4 ranks, 2 per node: gpu001 and gpu002 of rack leaf01.
  const test::Run comm = run_command(test::mpirun(4) + " " + kPlumb +
                                     " comm -q -b 8 -e 8 -n 2 -w 1 --collectives allreduce --cluster " +
                                     dir + "/map.yaml --json -");
  ASSERT_EQ(comm.exit_code, 0) << comm.err;
  const auto j = nlohmann::json::parse(comm.out);
  const auto& ranks = j["placement"]["ranks"];
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_EQ(ranks[0]["node"], "gpu001");
  EXPECT_EQ(ranks[3]["node"], "gpu002");
  EXPECT_EQ(ranks[3]["rack"], "leaf01");
}

// Without ranks_per_node, ranks are placed by host name: a topology.conf naming this machine.
TEST(TopoImportE2E, RanksFindTheirHostInTheImportedMap) {
  const std::string dir = test::temp_dir("topo-import-host");
  test::write_file(dir + "/topology.conf", "SwitchName=top Switches=tor1\nSwitchName=tor1 Nodes=" +
                                               this_host() + ",other-node\n");
  ASSERT_EQ(run_command(kPlumb + " topo import --from slurm-topology " + dir +
                        "/topology.conf -o " + dir + "/map.yaml")
                .exit_code,
            0);
  const test::Run comm = run_command(test::mpirun(2) + " " + kPlumb +
                                     " comm -q -b 8 -e 8 -n 2 -w 1 --collectives allreduce --cluster " +
                                     dir + "/map.yaml --json -");
  ASSERT_EQ(comm.exit_code, 0) << comm.err;
  const auto j = nlohmann::json::parse(comm.out);
  EXPECT_EQ(j["placement"]["ranks"][1]["node"], this_host());
  EXPECT_EQ(j["placement"]["ranks"][1]["rack"], "tor1");
}

TEST(TopoImportE2E, ExportThenImportGivesTheSameMap) {
  const std::string dir = test::temp_dir("topo-roundtrip");
  ASSERT_EQ(run_command(kPlumb + " topo import --from slurm-topology " + kFatTree + " -o " + dir +
                        "/map.yaml").exit_code, 0);
  const test::Run exported = run_command(kPlumb + " topo export --to slurm-topology --cluster " + dir +
                                         "/map.yaml -o " + dir + "/topology.conf");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(test::read_file(dir + "/topology.conf").find("\nSwitchName=leaf05 Nodes=gpu[129-160]\n"),
            std::string::npos);
  ASSERT_EQ(run_command(kPlumb + " topo import --from slurm-topology " + dir + "/topology.conf -o " +
                        dir + "/again.yaml").exit_code, 0);
  EXPECT_EQ(without_comments(test::read_file(dir + "/again.yaml")),
            without_comments(test::read_file(dir + "/map.yaml")));

  // HyperNodes cannot hold a leaf under two spines: one clear line, exit 2, no file.
  const test::Run hn = run_command(kPlumb + " topo export --to hypernodes --cluster " + dir +
                                   "/map.yaml -o " + dir + "/hn.yaml");
  EXPECT_EQ(hn.exit_code, 2);
  EXPECT_EQ(hn.err, "plumb: error: switch 'leaf01' is under spine01 and spine02: Volcano's HyperNodes "
                    "form a tree, each member under one parent\n");
  EXPECT_NE(run_command("test -e " + dir + "/hn.yaml").exit_code, 0);
}

TEST(TopoImportE2E, BadHostlistsAndCyclesGetFileLineErrors) {
  const std::string dir = test::temp_dir("topo-bad");
  test::write_file(dir + "/bad.conf", "SwitchName=s0 Switches=s1\n"
                                      "SwitchName=s1 Switches=s0\n"
                                      "SwitchName=leaf Nodes=gpu[01-1x]\n");
  const test::Run run = run_command(kPlumb + " topo import --from slurm-topology " + dir + "/bad.conf");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "plumb: error: " + dir + "/bad.conf:3: SwitchName=leaf: Nodes=gpu[01-1x]: bad "
                     "range '01-1x' in a hostlist (expected numbers such as 01-16)\n");
  test::write_file(dir + "/cycle.conf", "SwitchName=s0 Switches=s1\n"
                                        "SwitchName=s1 Switches=s0\n");
  const test::Run cycle = run_command(kPlumb + " topo import --from slurm-topology " + dir + "/cycle.conf");
  EXPECT_EQ(cycle.exit_code, 2);
  EXPECT_EQ(cycle.err, "plumb: error: " + dir + "/cycle.conf:1: SwitchName=s0: switches form a cycle: "
                       "s0 -> s1 -> s0\n");
}

TEST(TopoImportE2E, FormatsAndOptionsAreChecked) {
  const test::Run unknown = run_command(kPlumb + " topo import --from slurm " + kFatTree);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err, "plumb: error: --from: unknown format 'slurm'; expected one of "
                         "slurm-topology, k8s-nodes, hypernodes\n");
  const test::Run import_only = run_command(kPlumb + " topo export --to k8s-nodes --cluster x.yaml");
  EXPECT_EQ(import_only.exit_code, 2);
  EXPECT_EQ(import_only.err, "plumb: error: --to: k8s-nodes is an import format only; export "
                             "formats: slurm-topology, hypernodes\n");
  const test::Run label = run_command(kPlumb + " topo import --from slurm-topology --rack-label x " + kFatTree);
  EXPECT_EQ(label.exit_code, 2);
  EXPECT_EQ(label.err, "plumb: error: --rack-label: only --from k8s-nodes reads node labels\n");
}

TEST(TopoImportE2E, KubernetesNodesToStandardOutput) {
  const test::Run run = run_command(kPlumb + " topo import --from k8s-nodes " +
                                    std::string(PLUMB_TEST_FIXTURES) + "/topo/k8s-nodes-8.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("# devices: nvidia.com/gpu: 8 on 7 nodes\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  - name: s4\n    racks: [s0, s1]\n"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("plumb: note: racks from label volcano.sh/hypernode, tiers above from "
                         "volcano.sh/hypercluster\n"),
            std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace plumb
