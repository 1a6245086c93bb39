#include "report/topo_reporter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "support/subprocess.h"
#include "topo/topo_json.h"

namespace plumb::report {
namespace {

const std::string kFixtures = PLUMB_TEST_FIXTURES;

// The fixture's host with four ranks: two fine, one across both nodes, one away from its GPU,
// one whose CUDA_VISIBLE_DEVICES holds UUIDs.
topo::TopoRecord fixture_record() {
  topo::TopoRecord r;
  r.created = "2026-12-02T10:00:00Z";
  r.hosts.push_back(topo::load_topology_xml(kFixtures + "/topo/dgx-like-2numa.xml"));
  r.hosts[0].source = "dgx-like-2numa.xml";  // independent of where the checkout is
  const topo::Topology& t = r.hosts[0];
  const auto cpus = [](const char* list) { return topo::parse_cpu_list(list, "test"); };
  r.ranks = {topo::make_binding(t, 0, 0, cpus("0-15,32-47"), {{"LOCAL_RANK", "0"}}),
             topo::make_binding(t, 1, 1, cpus("0-63"), {{"LOCAL_RANK", "5"}}),
             topo::make_binding(t, 2, 2, cpus("0-15,32-47"), {{"LOCAL_RANK", "6"}}),
             topo::make_binding(t, 3, 3, cpus("16-31,48-63"),
                                {{"LOCAL_RANK", "0"}, {"CUDA_VISIBLE_DEVICES", "GPU-8f2c3a51"}})};
  for (const topo::RankBinding& b : r.ranks) {
    if (auto w = topo::check_binding(t, b)) r.warnings.push_back(*w);
  }
  return r;
}

// Compared with tests/fixtures/golden/topo_console.txt; after an intended change of format, rerun
// with PLUMB_UPDATE_GOLDEN=1 to rewrite it, and review its diff.
TEST(TopoReporters, ConsoleMatchesGolden) {
  std::ostringstream out;
  TopoConsoleReporter().report(fixture_record(), out);
  const std::string path = kFixtures + "/golden/topo_console.txt";
  if (std::getenv("PLUMB_UPDATE_GOLDEN")) test::write_file(path, out.str());
  EXPECT_EQ(out.str(), test::read_file(path)) << "golden file " << path;
}

TEST(TopoReporters, JsonSchemaAndFields) {
  std::ostringstream out;
  TopoJsonReporter().report(fixture_record(), out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "plumb.topo/1");
  EXPECT_EQ(j["created"], "2026-12-02T10:00:00Z");
  ASSERT_EQ(j["hosts"].size(), 1u);
  const nlohmann::json& host = j["hosts"][0];
  EXPECT_EQ(host["host"], "host-a");
  EXPECT_EQ(host["packages"], 2);
  EXPECT_EQ(host["cores"], 32);
  EXPECT_EQ(host["pus"], 64);
  EXPECT_EQ(host["numa_nodes"][1],
            (nlohmann::json{
                {"os_index", 1}, {"memory_bytes", 1099511627776ULL}, {"cpus", "16-31,48-63"}}));
  EXPECT_EQ(host["pci"].size(), 15u);
  EXPECT_EQ(host["pci"][0]["numa_node"], 0);
  EXPECT_EQ(host["pci"][4], (nlohmann::json{{"bus_id", "0000:1a:00.0"},
                                            {"vendor_id", "15b3"},
                                            {"device_id", "1021"},
                                            {"class_id", "0207"},
                                            {"kind", "rdma-nic"},
                                            {"vendor", "Mellanox"},
                                            {"numa_node", 0},
                                            {"os_devices", {"ib0", "mlx5_0"}}}));
  ASSERT_EQ(j["ranks"].size(), 4u);
  EXPECT_EQ(j["ranks"][1]["cpus"], "0-63");
  EXPECT_EQ(j["ranks"][1]["numa_nodes"], (nlohmann::json{0, 1}));
  EXPECT_EQ(j["ranks"][1]["accelerator"]["bus_id"], "0000:ab:00.0");
  EXPECT_EQ(j["ranks"][1]["accelerator"]["numa_node"], 1);
  EXPECT_TRUE(j["ranks"][3]["accelerator"]["index"].is_null());
  EXPECT_NE(j["ranks"][3]["accelerator"]["problem"].get<std::string>().find("UUID"),
            std::string::npos);
  ASSERT_EQ(j["warnings"].size(), 2u);
  EXPECT_EQ(j["warnings"][1]["rank"], 2);
  EXPECT_EQ(j["warnings"][1]["fix"], (nlohmann::json{{"numa_node", 1}, {"cpus", "16-31,48-63"}}));
}

TEST(TopoReporters, JsonRoundTripsEveryPiece) {
  const topo::TopoRecord r = fixture_record();
  const nlohmann::json j = topo_json(r);
  EXPECT_EQ(nlohmann::json(j["hosts"][0].get<topo::Topology>()), j["hosts"][0]);
  for (const nlohmann::json& rank : j["ranks"]) {
    EXPECT_EQ(nlohmann::json(rank.get<topo::RankBinding>()), rank);
  }
  for (const nlohmann::json& w : j["warnings"]) {
    EXPECT_EQ(nlohmann::json(w.get<topo::BindingWarning>()), w);
  }
}

}  // namespace
}  // namespace plumb::report
