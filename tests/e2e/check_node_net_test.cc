// plumb check node through the binary on a fake node tree (--root) with a stand-in mlnx_qos on
// PATH: the healthy node passes (exit 0); a NIC at half width and a wrong DSCP mapping are
// critical (exit 2), an unpinned NIC interrupt a warning (exit 1), a hung tool unknown (exit 3)
// within its timeout. Each run takes well under a second.
#include <gtest/gtest.h>

#include "check/fake_node.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

using check::test::FakeNode;

const std::string kSite =
    "schema: plumb.check-file/1\n"
    "sku: 2x GPU, 2x CX7 RoCE\n"
    "checks:\n"
    "  net.roce: {trust: dscp, pfc_priorities: [3], dscp_to_prio: {26: 3, 48: 6}}\n"
    "  net.ports: {ports: {ens1f0np0: 400, ens2f0np0: 400, mlx5_0/1: 400, mlx5_1/1: 400}}\n";

void add_mlnx_qos(const FakeNode& node, const std::string& ens2_file) {
  node.add_tool("mlnx_qos", "case \"$2\" in\n  ens2f0np0) cat " + check::test::fixture("mlnx_qos", ens2_file) +
                                ";;\n  *) cat " + check::test::fixture("mlnx_qos", "trust_dscp_pfc3.txt") + ";;\nesac");
}

// `plumb check node` on `node` with the site's check file; PATH holds the node's tools first.
test::Run check_node(const FakeNode& node, const std::string& extra = "",
                     const std::string& only = "pcie,net,host.nic_irq,host.accel_numa") {
  const std::string config = node.tools() + "/../site.yaml";
  test::write_file(config, kSite);
  return test::run_command("PATH=" + node.tools() + ":$PATH " + std::string(PLUMB_BIN) +
                           " check node --root " + node.root() + " --config " + config +
                           " --host node7 --only " + only + " " + extra);
}

std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

TEST(CheckNodeNet, AHealthyNodePasses) {
  FakeNode node("e2e-net-healthy");
  check::test::build_nvidia_node(node);
  add_mlnx_qos(node, "trust_dscp_pfc3.txt");
  const test::Run r = check_node(node);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(last_line(r.out), "CHECK OK - node7: 5 checks passed");
}

TEST(CheckNodeNet, ANicAtHalfWidthIsCritical) {
  FakeNode node("e2e-net-half");
  check::test::build_nvidia_node(node);
  add_mlnx_qos(node, "trust_dscp_pfc3.txt");
  node.write("/sys/bus/pci/devices/0000:3b:00.0/current_link_width", "8\n");
  const test::Run r = check_node(node);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(last_line(r.out),
            "CHECK CRITICAL - node7: pcie.link: mlx5_0 (0000:3b:00.0) at x8, 16.0 GT/s PCIe (expected x16, "
            "16.0 GT/s PCIe)");
}

TEST(CheckNodeNet, AnUnpinnedNicInterruptIsAWarning) {
  FakeNode node("e2e-net-irq");
  check::test::build_nvidia_node(node);
  add_mlnx_qos(node, "trust_dscp_pfc3.txt");
  node.set_irq_affinity(152, "0-7");
  const test::Run r = check_node(node);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(last_line(r.out),
            "CHECK WARNING - node7: host.nic_irq: mlx5_0 (0000:3b:00.0): IRQ 152 on CPUs 0-7 (expected CPUs 0-3 "
            "(NUMA node 0))");
}

TEST(CheckNodeNet, AWrongDscpMappingIsCritical) {
  FakeNode node("e2e-net-dscp");
  check::test::build_nvidia_node(node);
  add_mlnx_qos(node, "trust_dscp_dscp26_prio0.txt");
  const test::Run r = check_node(node, "--json -");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("\"value\": \"ens2f0np0 DSCP 26 -> priority 0\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"expected\": \"DSCP 26 -> priority 3\""), std::string::npos) << r.out;
  EXPECT_EQ(last_line(r.err),
            "CHECK CRITICAL - node7: net.roce: ens2f0np0 DSCP 26 -> priority 0 (expected DSCP 26 -> priority 3)");
}

TEST(CheckNodeNet, AHungToolIsUnknownWithinItsTimeout) {
  FakeNode node("e2e-net-hung");
  check::test::build_nvidia_node(node);
  node.add_tool("mlnx_qos", "sleep 30");
  const test::Run r = check_node(node, "--timeout 0.5", "net.roce");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(last_line(r.out),
            "CHECK UNKNOWN - node7: net.roce: ens1f0np0: mlnx_qos: no answer within 0.5 s (stopped); ens2f0np0: "
            "mlnx_qos: no answer within 0.5 s (stopped)");
}

}  // namespace
}  // namespace plumb
