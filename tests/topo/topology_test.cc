#include "topo/topology.h"

#include <gtest/gtest.h>

#include <map>

#include "common/error.h"
#include "common/units.h"
#include "support/subprocess.h"

namespace plumb::topo {
namespace {

const std::string kFixture = std::string(PLUMB_TEST_FIXTURES) + "/topo/dgx-like-2numa.xml";

TEST(Topology, ReadsTheTwoSocketEightGpuFixture) {
  const Topology t = load_topology_xml(kFixture);
  EXPECT_EQ(t.host, "host-a");
  EXPECT_EQ(t.source, kFixture);
  EXPECT_EQ(t.packages, 2);
  EXPECT_EQ(t.cores, 32);
  EXPECT_EQ(t.pus, 64);
  ASSERT_EQ(t.numa_nodes.size(), 2u);
  EXPECT_EQ(t.numa_nodes[0].os_index, 0);
  EXPECT_EQ(t.numa_nodes[0].memory_bytes, 1024 * kGiB);
  EXPECT_EQ(format_cpu_list(t.numa_nodes[0].cpus), "0-15,32-47");
  EXPECT_EQ(t.numa_nodes[1].memory_bytes, 1024 * kGiB);
  EXPECT_EQ(format_cpu_list(t.numa_nodes[1].cpus), "16-31,48-63");
  EXPECT_TRUE(t.notes.empty());
}

TEST(Topology, CountsDevicesPerNumaNodeByKind) {
  const Topology t = load_topology_xml(kFixture);
  std::map<std::pair<int, PciKind>, int> count;
  for (const PciDevice& d : t.pci) ++count[{d.numa_node, d.kind}];
  EXPECT_EQ(t.pci.size(), 15u);
  EXPECT_EQ((count[{0, PciKind::kAccelerator}]), 4);
  EXPECT_EQ((count[{1, PciKind::kAccelerator}]), 4);
  EXPECT_EQ((count[{0, PciKind::kRdmaNic}]), 2);
  EXPECT_EQ((count[{1, PciKind::kRdmaNic}]), 2);  // one InfiniBand, one RoCE (class 0200 + mlx5_3)
  EXPECT_EQ((count[{0, PciKind::kNic}]), 1);
  EXPECT_EQ((count[{0, PciKind::kNvme}]), 1);
  EXPECT_EQ((count[{0, PciKind::kOther}]), 1);  // the BMC's VGA
}

TEST(Topology, DeviceFieldsAndAcceleratorOrder) {
  const Topology t = load_topology_xml(kFixture);
  const std::vector<const PciDevice*> acc = t.accelerators();
  ASSERT_EQ(acc.size(), 8u);
  EXPECT_EQ(acc[0]->bus_id, "0000:18:00.0");
  EXPECT_EQ(acc[3]->bus_id, "0000:5d:00.0");
  EXPECT_EQ(acc[4]->bus_id, "0000:9a:00.0");
  EXPECT_EQ(acc[4]->numa_node, 1);
  EXPECT_EQ(acc[4]->vendor_id, 0x10de);
  EXPECT_EQ(acc[4]->device_id, 0x2330);
  EXPECT_EQ(acc[4]->class_id, 0x0302);
  EXPECT_EQ(acc[4]->vendor, "NVIDIA");
  for (const PciDevice& d : t.pci) {
    if (d.bus_id != "0000:bc:00.0") continue;
    EXPECT_EQ(d.kind, PciKind::kRdmaNic);
    EXPECT_EQ(d.os_devices, (std::vector<std::string>{"ens9f0np0", "mlx5_3"}));
  }
}

TEST(Topology, MissingOrInvalidXmlNamesTheFile) {
  try {
    load_topology_xml("/nonexistent/topo.xml");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/topo.xml: cannot read: No such file or directory");
  }
  const std::string bad = test::temp_dir("topo-bad") + "/bad.xml";
  test::write_file(bad, "<topology>not hwloc</nope>");
  try {
    load_topology_xml(bad);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              bad + ": not an hwloc XML topology (export one with lstopo --of xml)");
  }
}

TEST(Topology, ProbesThisMachine) {
  const Topology t = probe_topology();
  EXPECT_EQ(t.source, "hwloc");
  EXPECT_TRUE(t.notes.empty());
  EXPECT_GE(t.packages, 1);
  EXPECT_GE(t.pus, 1);
  ASSERT_GE(t.numa_nodes.size(), 1u);
  EXPECT_GT(t.numa_nodes[0].memory_bytes, 0u);
  size_t cpus = 0;
  for (const NumaNode& n : t.numa_nodes) cpus += n.cpus.size();
  EXPECT_EQ(cpus, static_cast<size_t>(t.pus));
}

}  // namespace
}  // namespace plumb::topo
