// pcie.link and host.accel_numa against fake sysfs trees: healthy, a NIC at half width, a NIC
// below its speed, an idle GPU's lowered speed, the check file's expectations, genconf.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "check/check.h"
#include "check/fake_node.h"
#include "support/subprocess.h"

namespace plumb::check {
namespace {

using test::FakeNode;

CheckResult run(const std::string& name, const FakeNode& node, const std::string& section = "{}") {
  return find_check(name)->run(node.context(), CheckSection(YAML::Load(section), "site.yaml", "checks." + name));
}

TEST(PcieLink, HealthyNodePassesAndAnIdleGpusSpeedIsNotJudged) {
  FakeNode node("pcie-healthy");
  test::build_nvidia_node(node);
  const CheckResult r = run("pcie.link", node);
  EXPECT_EQ(r.status, Status::kOk);
  EXPECT_EQ(r.value, "4 links at full width (2 accelerators, 2 NICs)");
  EXPECT_EQ(r.expected, "each at its maximum width");
  EXPECT_EQ(r.detail, "accelerator speed not judged without accelerator_speed (idle GPUs lower it)");
}

TEST(PcieLink, ANicAtHalfWidthIsCritical) {
  FakeNode node("pcie-half");
  test::build_nvidia_node(node);
  node.write("/sys/bus/pci/devices/0000:3b:00.0/current_link_width", "8\n");
  const CheckResult r = run("pcie.link", node);
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value, "mlx5_0 (0000:3b:00.0) at x8, 16.0 GT/s PCIe");
  EXPECT_EQ(r.expected, "x16, 16.0 GT/s PCIe");
  EXPECT_EQ(r.detail, "reseat the card or check the riser; lspci -vv -s 0000:3b:00.0 | grep LnkSta");
}

TEST(PcieLink, ANicBelowItsSpeedIsAWarning) {
  FakeNode node("pcie-slow");
  test::build_nvidia_node(node);
  node.write("/sys/bus/pci/devices/0000:bb:00.0/current_link_speed", "8.0 GT/s PCIe\n");
  const CheckResult r = run("pcie.link", node);
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "mlx5_1 (0000:bb:00.0) at x16, 8.0 GT/s PCIe");
  EXPECT_EQ(r.expected, "x16, 16 GT/s");
  EXPECT_EQ(r.detail, "check the slot's PCIe speed in the BIOS and the riser; lspci -vv -s 0000:bb:00.0 | grep LnkSta");
}

TEST(PcieLink, AnAcceleratorsSpeedIsJudgedAgainstTheCheckFile) {
  FakeNode node("pcie-gpu-speed");
  test::build_nvidia_node(node);
  const CheckResult r = run("pcie.link", node, "{accelerator_speed: 32}");
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "NVIDIA GPU (0000:98:00.0) at x16, 2.5 GT/s PCIe");
  EXPECT_EQ(r.expected, "x16, 32 GT/s");
  EXPECT_EQ(r.detail, "an idle accelerator lowers its link speed: read it under load; lspci -vv -s 0000:98:00.0 | grep LnkSta");
}

TEST(PcieLink, TheCheckFilesWidthWins) {
  FakeNode node("pcie-x8-site");
  test::build_nvidia_node(node);
  node.write("/sys/bus/pci/devices/0000:3b:00.0/current_link_width", "8\n");
  EXPECT_EQ(run("pcie.link", node, "{nic_width: 8}").status, Status::kOk);
  const CheckResult r = run("pcie.link", node, "{nic_width: 16, nic_speed: 16}");
  EXPECT_EQ(r.expected, "x16, 16 GT/s");
}

TEST(PcieLink, SeveralFaultsListWorstFirst) {
  FakeNode node("pcie-two");
  test::build_nvidia_node(node);
  node.write("/sys/bus/pci/devices/0000:bb:00.0/current_link_speed", "8.0 GT/s PCIe\n");
  node.write("/sys/bus/pci/devices/0000:18:00.0/current_link_width", "4\n");
  const CheckResult r = run("pcie.link", node);
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value, "NVIDIA GPU (0000:18:00.0) at x4, 32.0 GT/s PCIe; mlx5_1 (0000:bb:00.0) at x16, 8.0 GT/s PCIe");
  EXPECT_EQ(r.expected, "x16, 32.0 GT/s PCIe");
  EXPECT_EQ(r.detail, "confirm under load (nvidia-smi -q -d PCI), then reseat the card or check the riser; "
                      "lspci -vv -s 0000:18:00.0 | grep LnkSta");
}

TEST(PcieLink, NoDevicesIsSkipped) {
  FakeNode node("pcie-none");
  const CheckResult r = run("pcie.link", node);
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.detail, "no accelerator or NIC with PCIe link attributes in /sys/bus/pci/devices");
}

TEST(PcieLink, AWidthThatIsNotANumberNamesTheKey) {
  FakeNode node("pcie-bad-key");
  test::build_nvidia_node(node);
  EXPECT_EQ(plumb::test::error_message([&] { run("pcie.link", node, "{nic_width: wide}"); }),
            "site.yaml:1: checks.pcie.link.nic_width: must be a whole number from 1 to 32, got 'wide'");
}

TEST(PcieLink, GenconfRecordsWidthsAndNicSpeedButNotAnIdleGpusSpeed) {
  FakeNode node("pcie-genconf");
  test::build_nvidia_node(node);
  const YAML::Node out = find_check("pcie.link")->observe(node.context());
  EXPECT_EQ(out["accelerator_width"].as<int>(), 16);
  EXPECT_EQ(out["nic_width"].as<int>(), 16);
  EXPECT_EQ(out["nic_speed"].as<double>(), 16);
  EXPECT_FALSE(out["accelerator_speed"].IsDefined());
}

TEST(AccelNuma, HealthyWithoutExpectations) {
  FakeNode node("numa-healthy");
  test::build_nvidia_node(node);
  const CheckResult r = run("host.accel_numa", node);
  EXPECT_EQ(r.status, Status::kOk);
  EXPECT_EQ(r.value, "2 accelerators on NUMA nodes 0 (1), 1 (1)");
}

TEST(AccelNuma, ANodeOtherThanTheBindingIsAWarning) {
  FakeNode node("numa-moved");
  test::build_nvidia_node(node);
  const CheckResult r = run("host.accel_numa", node, "{numa_nodes: {'0000:18:00.0': 0, '0000:98:00.0': 0}}");
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "NVIDIA GPU (0000:98:00.0) on NUMA node 1");
  EXPECT_EQ(r.expected, "node 0");
  EXPECT_EQ(r.detail, "the device moved or the BIOS NUMA setting changed: fix the job's CPU binding "
                      "(plumb topo) or the check file");
}

TEST(AccelNuma, NodeMinusOneOnATwoNodeHostIsAWarning) {
  FakeNode node("numa-unreported");
  test::build_nvidia_node(node);
  node.write("/sys/bus/pci/devices/0000:18:00.0/numa_node", "-1\n");
  const CheckResult r = run("host.accel_numa", node);
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "NVIDIA GPU (0000:18:00.0) on NUMA node -1 (not reported) on a 2-node host");
  EXPECT_EQ(r.detail, "the firmware does not report the device's locality (ACPI _PXM): enable it in the "
                      "BIOS; cat /sys/bus/pci/devices/0000:18:00.0/numa_node");
}

TEST(AccelNuma, AnExpectedDeviceMissingAndABadNodeNumber) {
  FakeNode node("numa-missing");
  test::build_nvidia_node(node);
  const CheckResult r = run("host.accel_numa", node, "{numa_nodes: {'0000:18:00.0': 0, '0000:19:00.0': 0}}");
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "0000:19:00.0 not found");
  EXPECT_EQ(plumb::test::error_message([&] { run("host.accel_numa", node, "{numa_nodes: {'0000:18:00.0': x}}"); }),
            "site.yaml:1: checks.host.accel_numa.numa_nodes: '0000:18:00.0' must map to a NUMA node number (0 "
            "or more), got 'x'");
}

TEST(AccelNuma, GenconfRecordsEachAcceleratorsNode) {
  FakeNode node("numa-genconf");
  test::build_nvidia_node(node);
  const YAML::Node out = find_check("host.accel_numa")->observe(node.context());
  EXPECT_EQ(out["numa_nodes"]["0000:18:00.0"].as<int>(), 0);
  EXPECT_EQ(out["numa_nodes"]["0000:98:00.0"].as<int>(), 1);
}

}  // namespace
}  // namespace plumb::check
