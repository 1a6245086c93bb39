// net.ports, net.roce and host.nic_irq against fake trees and stand-in hccn_tool / mlnx_qos on
// PATH that print the fixtures of their real formats: healthy, each injected fault with its exact
// message, a hung tool (unknown, not a hang) and a missing one.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>

#include "check/check.h"
#include "check/fake_node.h"
#include "support/subprocess.h"

namespace plumb::check {
namespace {

using test::FakeNode;

CheckResult run(const std::string& name, const NodeContext& c, const std::string& section = "{}") {
  return find_check(name)->run(c, CheckSection(YAML::Load(section), "site.yaml", "checks." + name));
}

// ---- net.ports ----------------------------------------------------------------------------------

TEST(NetPorts, HealthyWithAndWithoutExpectations) {
  FakeNode node("ports-healthy");
  test::build_nvidia_node(node);
  const CheckResult r = run("net.ports", node.context());
  EXPECT_EQ(r.status, Status::kOk);
  EXPECT_EQ(r.value, "4 of 4 ports up");
  EXPECT_EQ(r.detail, "no expected ports: plumb check genconf records them");
  EXPECT_EQ(run("net.ports", node.context(), "{ports: {ens1f0np0: 400, mlx5_1/1: 400}}").status, Status::kOk);
}

TEST(NetPorts, ADownPortAMissingOneAndASlowOneAreCritical) {
  FakeNode node("ports-faults");
  test::build_nvidia_node(node);
  node.write("/sys/class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n");
  node.write("/sys/class/infiniband/mlx5_1/ports/1/phys_state", "3: Disabled\n");
  node.write("/sys/class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (2X NDR)\n");
  const CheckResult down = run("net.ports", node.context(), "{ports: {mlx5_1/1: 400}}");
  EXPECT_EQ(down.status, Status::kCritical);
  EXPECT_EQ(down.value, "mlx5_1/1 DOWN");
  EXPECT_EQ(down.expected, "up at 400 Gb/s");
  EXPECT_EQ(down.detail, "check the cable, the transceiver and the switch port; ibstat mlx5_1");
  EXPECT_EQ(run("net.ports", node.context(), "{ports: {mlx5_0/1: 400}}").value, "mlx5_0/1 ACTIVE at 200 Gb/s");
  const CheckResult missing = run("net.ports", node.context(), "{ports: {ens9f0: 100}}");
  EXPECT_EQ(missing.value, "ens9f0 missing");
  EXPECT_EQ(missing.detail, "the driver did not create it: dmesg | grep -i ens9f0");
  EXPECT_EQ(plumb::test::error_message([&] { run("net.ports", node.context(), "{ports: {ens1f0np0: fast}}"); }),
            "site.yaml:1: checks.net.ports.ports: 'ens1f0np0' must map to the port's rate in Gb/s (0.01 to 1600), "
            "got 'fast'");
}

TEST(NetPorts, AnInfiniBandPortWithoutASubnetManagerWarnsWithoutExpectations) {
  FakeNode node("ports-init");
  test::build_nvidia_node(node);
  node.write("/sys/class/infiniband/mlx5_0/ports/1/state", "2: INIT\n");
  const CheckResult r = run("net.ports", node.context());
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "mlx5_0/1 INIT (physical link up)");
  EXPECT_EQ(r.expected, "ACTIVE");
}

TEST(NetPorts, GenconfRecordsEachUpPortsRate) {
  FakeNode node("ports-genconf");
  test::build_nvidia_node(node);
  const YAML::Node out = find_check("net.ports")->observe(node.context());
  EXPECT_EQ(out["ports"].size(), 4u);
  EXPECT_EQ(out["ports"]["mlx5_0/1"].as<double>(), 400);
  EXPECT_EQ(out["ports"]["ens2f0np0"].as<double>(), 400);
}

// ---- net.roce: Ascend ---------------------------------------------------------------------------

// A stand-in hccn_tool: `overrides` ("1 -dscp_to_tc" -> file) first, then `files` by flag.
std::string hccn_script(const std::map<std::string, std::string>& files,
                        const std::map<std::string, std::string>& overrides = {}) {
  std::string body = "case \"$2 $3\" in\n";
  for (const auto& [key, file] : overrides) body += "  \"" + key + "\") cat " + test::fixture("hccn_tool", file) + ";;\n";
  for (const auto& [flag, file] : files) body += "  *\" " + flag + "\") cat " + test::fixture("hccn_tool", file) + ";;\n";
  return body + "  *) echo \"unknown command\"; exit 2;;\nesac";
}

const std::map<std::string, std::string> kHealthyHccn = {{"-link", "link_up.txt"},
                                                         {"-net_health", "net_health_success.txt"},
                                                         {"-pfc", "pfc_4.txt"},
                                                         {"-dscp_to_tc", "dscp_to_tc_48_tc4.txt"}};
const std::string kAscendSite = "{pfc_priorities: [4], dscp_to_tc: {48: 4}}";

TEST(NetRoceAscend, HealthyNpus) {
  FakeNode node("roce-ascend-ok");
  test::build_ascend_node(node);
  node.add_tool("hccn_tool", hccn_script(kHealthyHccn));
  const test::ScopedPath path(node.tools());
  const CheckResult r = run("net.roce", node.context(), kAscendSite);
  EXPECT_EQ(r.status, Status::kOk) << r.value;
  EXPECT_EQ(r.value, "2 NPUs, 0 RoCE ports as expected");
}

TEST(NetRoceAscend, AWrongDscpMappingIsCritical) {
  FakeNode node("roce-ascend-dscp");
  test::build_ascend_node(node);
  node.add_tool("hccn_tool", hccn_script(kHealthyHccn, {{"1 -dscp_to_tc", "dscp_to_tc_48_tc3.txt"}}));
  const test::ScopedPath path(node.tools());
  const CheckResult r = run("net.roce", node.context(), kAscendSite);
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value, "NPU 1 DSCP 48 -> TC 3");
  EXPECT_EQ(r.expected, "DSCP 48 -> TC 4");
  EXPECT_EQ(r.detail, "hccn_tool -i 1 -dscp_to_tc -s dscp 48 tc 4; the switch must queue DSCP 48 the same");
}

TEST(NetRoceAscend, LinkDownNetHealthAndPfc) {
  FakeNode node("roce-ascend-faults");
  test::build_ascend_node(node);
  node.add_tool("hccn_tool", hccn_script(kHealthyHccn, {{"0 -link", "link_down.txt"},
                                                        {"1 -net_health", "net_health_fault.txt"},
                                                        {"1 -pfc", "pfc_3.txt"}}));
  const test::ScopedPath path(node.tools());
  const CheckResult r = run("net.roce", node.context(), kAscendSite);
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value, "NPU 0 link DOWN; NPU 1 net health Fault; NPU 1 PFC on priorities 3");
  EXPECT_EQ(r.expected, "UP");
  EXPECT_EQ(r.detail, "check the NPU's optical module and fibre: hccn_tool -i 0 -optical -g");
}

TEST(NetRoceAscend, AHungToolIsUnknownNotAHang) {
  FakeNode node("roce-ascend-hung");
  test::build_ascend_node(node);
  node.add_tool("hccn_tool", "sleep 30");
  const test::ScopedPath path(node.tools());
  const CheckResult r = run("net.roce", node.context(0.3), kAscendSite);
  EXPECT_EQ(r.status, Status::kUnknown);
  EXPECT_EQ(r.value, "NPU 0: hccn_tool: no answer within 0.3 s (stopped); NPU 1: hccn_tool: no answer within 0.3 s (stopped)");
  EXPECT_EQ(r.detail, "hccn_tool: no answer within 0.3 s (stopped)");
}

TEST(NetRoceAscend, UnexpectedOutputIsUnknown) {
  FakeNode node("roce-ascend-garbled");
  test::build_ascend_node(node);
  node.add_tool("hccn_tool", "echo 'dev id is invalid'");
  const test::ScopedPath path(node.tools());
  const CheckResult r = run("net.roce", node.context());
  EXPECT_EQ(r.status, Status::kUnknown);
  EXPECT_EQ(r.detail, "hccn_tool -i 0 -link -g: unexpected output 'dev id is invalid'");
}

TEST(NetRoceAscend, AMissingToolSkipsWhenNothingIsExpectedElseUnknown) {
  FakeNode node("roce-ascend-missing");
  test::build_ascend_node(node);
  const test::ScopedPath path(node.tools());
  const CheckResult none = run("net.roce", node.context());
  EXPECT_TRUE(none.skipped);
  EXPECT_EQ(none.detail, "hccn_tool not found on PATH and nothing expected");
  const CheckResult expected = run("net.roce", node.context(), kAscendSite);
  EXPECT_EQ(expected.status, Status::kUnknown);
  EXPECT_EQ(expected.detail, "hccn_tool: not found on PATH");
}

TEST(NetRoce, NoRoceNicIsSkipped) {
  FakeNode node("roce-none");
  const CheckResult r = run("net.roce", node.context());
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.detail, "no RoCE NIC: no Ascend NPU and no Mellanox port with an Ethernet link layer");
}

TEST(NetRoce, ABadDscpInTheCheckFileNamesTheKey) {
  FakeNode node("roce-bad-key");
  EXPECT_EQ(plumb::test::error_message([&] { run("net.roce", node.context(), "{dscp_to_tc: {64: 1}}"); }),
            "site.yaml:1: checks.net.roce.dscp_to_tc: must hold whole numbers from 0 to 63, got '64'");
}

// ---- net.roce: NVIDIA/Mellanox ------------------------------------------------------------------

std::string mlnx_script(const std::string& ens2_file) {
  return "case \"$2\" in\n  ens2f0np0) cat " + test::fixture("mlnx_qos", ens2_file) + ";;\n  *) cat " +
         test::fixture("mlnx_qos", "trust_dscp_pfc3.txt") + ";;\nesac";
}

const std::string kMlnxSite = "{trust: dscp, pfc_priorities: [3], dscp_to_prio: {26: 3, 48: 6}}";

TEST(NetRoceMlnx, HealthyPorts) {
  FakeNode node("roce-mlnx-ok");
  test::build_nvidia_node(node);
  node.add_tool("mlnx_qos", mlnx_script("trust_dscp_pfc3.txt"));
  const test::ScopedPath path(node.tools());
  const CheckResult r = run("net.roce", node.context(), kMlnxSite);
  EXPECT_EQ(r.status, Status::kOk) << r.value;
  EXPECT_EQ(r.value, "0 NPUs, 2 RoCE ports as expected");
}

TEST(NetRoceMlnx, AWrongDscpMappingIsCritical) {
  FakeNode node("roce-mlnx-dscp");
  test::build_nvidia_node(node);
  node.add_tool("mlnx_qos", mlnx_script("trust_dscp_dscp26_prio0.txt"));
  const test::ScopedPath path(node.tools());
  const CheckResult r = run("net.roce", node.context(), kMlnxSite);
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value, "ens2f0np0 DSCP 26 -> priority 0");
  EXPECT_EQ(r.expected, "DSCP 26 -> priority 3");
  EXPECT_EQ(r.detail, "mlnx_qos -i ens2f0np0 --dscp2prio set,26,3");
}

TEST(NetRoceMlnx, TrustPcpAndNoPfc) {
  FakeNode node("roce-mlnx-pcp");
  test::build_nvidia_node(node);
  node.add_tool("mlnx_qos", mlnx_script("trust_pcp_no_pfc.txt"));
  const test::ScopedPath path(node.tools());
  const CheckResult r = run("net.roce", node.context(), kMlnxSite);
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value, "ens2f0np0 trust pcp; ens2f0np0 PFC on priorities none; ens2f0np0 DSCP 26 -> unmapped; "
                     "ens2f0np0 DSCP 48 -> unmapped");
  EXPECT_EQ(r.expected, "trust dscp");
  EXPECT_EQ(r.detail, "mlnx_qos -i ens2f0np0 --trust dscp");
}

TEST(NetRoceMlnx, GenconfRecordsTrustAndPfc) {
  FakeNode node("roce-mlnx-genconf");
  test::build_nvidia_node(node);
  node.add_tool("mlnx_qos", mlnx_script("trust_dscp_pfc3.txt"));
  const test::ScopedPath path(node.tools());
  const YAML::Node out = find_check("net.roce")->observe(node.context());
  EXPECT_EQ(out["trust"].as<std::string>(), "dscp");
  EXPECT_EQ(out["pfc_priorities"][0].as<int>(), 3);
}

// ---- host.nic_irq -------------------------------------------------------------------------------

TEST(NicIrq, HealthyNodePasses) {
  FakeNode node("irq-healthy");
  test::build_nvidia_node(node);
  const CheckResult r = run("host.nic_irq", node.context());
  EXPECT_EQ(r.status, Status::kOk);
  EXPECT_EQ(r.value, "4 interrupts of 2 NICs on their NUMA node's CPUs");
}

TEST(NicIrq, AnUnpinnedInterruptIsAWarningNamingItsIrqAndCpus) {
  FakeNode node("irq-unpinned");
  test::build_nvidia_node(node);
  node.set_irq_affinity(152, "0-7");
  const CheckResult r = run("host.nic_irq", node.context());
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "mlx5_0 (0000:3b:00.0): IRQ 152 on CPUs 0-7");
  EXPECT_EQ(r.expected, "CPUs 0-3 (NUMA node 0)");
  EXPECT_EQ(r.detail, "stop irqbalance and pin the NIC to its node: set_irq_affinity_bynode.sh 0 ens1f0np0 "
                      "(MLNX_OFED), or echo 0-3 > /proc/irq/152/smp_affinity_list");
  EXPECT_EQ(run("host.nic_irq", node.context(), "{severity: critical}").status, Status::kCritical);
}

TEST(NicIrq, AnInterruptOnTheOtherNodeAndSeveralOfOneNic) {
  FakeNode node("irq-other-node");
  test::build_nvidia_node(node);
  node.set_irq_affinity(160, "0");
  node.set_irq_affinity(150, "4-7");
  node.set_irq_affinity(151, "5");
  const CheckResult r = run("host.nic_irq", node.context());
  EXPECT_EQ(r.value, "mlx5_0 (0000:3b:00.0): IRQ 150 on CPUs 4-7 (and 1 more of its 3 vectors); "
                     "mlx5_1 (0000:bb:00.0): IRQ 160 on CPUs 0");
}

TEST(NicIrq, VectorsListedOnlyInMsiIrqsAreJudged) {
  FakeNode node("irq-msi");
  test::build_nvidia_node(node);
  node.write("/sys/bus/pci/devices/0000:bb:00.0/msi_irqs/161", "msix\n");
  node.set_irq_affinity(161, "0-3");
  EXPECT_EQ(run("host.nic_irq", node.context()).value, "mlx5_1 (0000:bb:00.0): IRQ 161 on CPUs 0-3");
}

TEST(NicIrq, OneNumaNodeIsSkippedAndABadSeverityNamesTheKey) {
  FakeNode node("irq-one-node");
  test::build_ascend_node(node);
  node.add_pci({"0000:3b:00.0", "0x15b3", "0x020000", 16, 16, "16.0 GT/s", "16.0 GT/s", 0, {"ens1f0"}, {"mlx5_0"}});
  const CheckResult r = run("host.nic_irq", node.context());
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.detail, "one NUMA node: every CPU is local to the NICs");
  EXPECT_EQ(plumb::test::error_message([&] { run("host.nic_irq", node.context(), "{severity: high}"); }),
            "site.yaml:1: checks.host.nic_irq.severity: must be warning or critical, got 'high'");
}

}  // namespace
}  // namespace plumb::check
