// The readers of hccn_tool, mlnx_qos and /proc/interrupts against fixtures of their real formats
// (tests/fixtures/check/*/SOURCES.md) and against what they must refuse.
#include <gtest/gtest.h>

#include "check/fake_node.h"
#include "check/hccn_tool.h"
#include "check/mlnx_qos.h"
#include "check/proc_interrupts.h"
#include "support/subprocess.h"

namespace plumb::check {
namespace {

std::string hccn(const std::string& file) { return plumb::test::read_file(test::fixture("hccn_tool", file)); }
std::string mlnx(const std::string& file) { return plumb::test::read_file(test::fixture("mlnx_qos", file)); }

TEST(HccnToolParse, LinkAndNetHealth) {
  EXPECT_EQ(parse_hccn_link(hccn("link_up.txt")), "UP");
  EXPECT_EQ(parse_hccn_link(hccn("link_down.txt")), "DOWN");
  EXPECT_EQ(parse_hccn_net_health(hccn("net_health_success.txt")), "Success");
  EXPECT_EQ(parse_hccn_net_health(hccn("net_health_fault.txt")), "Fault");
  EXPECT_FALSE(parse_hccn_link("Link status is down\n").has_value());
  EXPECT_FALSE(parse_hccn_net_health("").has_value());
}

TEST(HccnToolParse, PfcTable) {
  EXPECT_EQ(parse_hccn_pfc(hccn("pfc_4.txt")), std::vector<int>{4});
  EXPECT_EQ(parse_hccn_pfc(hccn("pfc_3.txt")), std::vector<int>{3});
  EXPECT_FALSE(parse_hccn_pfc("PFC configuration:\npriority 0 1 2\nenabled 0 1\n").has_value());
  EXPECT_FALSE(parse_hccn_pfc("PFC configuration:\npriority 0 1\nenabled 0 2\n").has_value());
}

TEST(HccnToolParse, DscpToTcInEitherLayout) {
  EXPECT_EQ(parse_hccn_dscp_to_tc(hccn("dscp_to_tc_48_tc4.txt")), (std::map<int, int>{{48, 4}}));
  EXPECT_EQ(parse_hccn_dscp_to_tc(hccn("dscp_to_tc_48_tc3.txt")), (std::map<int, int>{{48, 3}}));
  EXPECT_EQ(parse_hccn_dscp_to_tc(hccn("dscp_to_tc_keyword_46_tc0.txt")), (std::map<int, int>{{46, 0}}));
  EXPECT_TRUE(parse_hccn_dscp_to_tc("dscp 64 tc 1\n48 9\nerror 22\n").empty());
}

TEST(HccnToolParse, OutputExcerptIsTheFirstLineCut) {
  EXPECT_EQ(output_excerpt("\n  Link status is down\nmore"), "Link status is down");
  EXPECT_EQ(output_excerpt(std::string(70, 'x')), std::string(60, 'x') + "...");
  EXPECT_EQ(output_excerpt("\x1b[31mred"), "\\x1b[31mred");
}

TEST(MlnxQosParse, TrustPfcAndTheDscpMap) {
  const std::optional<MlnxQos> q = parse_mlnx_qos(mlnx("trust_dscp_pfc3.txt"));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->trust, "dscp");
  EXPECT_EQ(q->pfc_priorities, std::vector<int>{3});
  EXPECT_EQ(q->dscp_to_prio.size(), 64u);
  EXPECT_EQ(q->dscp_to_prio.at(26), 3);
  EXPECT_EQ(q->dscp_to_prio.at(48), 6);
}

TEST(MlnxQosParse, AWrappedPriorityAndTrustPcp) {
  const std::optional<MlnxQos> moved = parse_mlnx_qos(mlnx("trust_dscp_dscp26_prio0.txt"));
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->dscp_to_prio.at(26), 0);
  EXPECT_EQ(moved->dscp_to_prio.at(27), 3);
  const std::optional<MlnxQos> pcp = parse_mlnx_qos(mlnx("trust_pcp_no_pfc.txt"));
  ASSERT_TRUE(pcp.has_value());
  EXPECT_EQ(pcp->trust, "pcp");
  EXPECT_EQ(pcp->pfc_priorities, std::vector<int>{});
  EXPECT_TRUE(pcp->dscp_to_prio.empty());
  EXPECT_FALSE(parse_mlnx_qos("Interface name is required\n").has_value());
}

TEST(ProcInterrupts, VectorsAndTheirNames) {
  const std::vector<InterruptLine> all = parse_interrupts(test::kNvidiaInterrupts);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[2].irq, 151);
  EXPECT_EQ(all[2].count, 123456);
  EXPECT_EQ(all[2].description, "IR-PCI-MSI 31981569-edge      mlx5_comp0@pci:0000:3b:00.0");
  EXPECT_TRUE(interrupt_of(all[2], "0000:3b:00.0", {"ens1f0np0", "mlx5_0"}));
  EXPECT_FALSE(interrupt_of(all[4], "0000:3b:00.0", {"ens1f0np0", "mlx5_0"}));
  EXPECT_FALSE(interrupt_of(all[0], "0000:3b:00.0", {"ens1f0np0", "mlx5_0"}));
}

TEST(ProcInterrupts, InterfaceNamedVectorsAndJunk) {
  const std::string text =
      "           CPU0       CPU1\n"
      "  64:         10         20   PCI-MSI 524288-edge      ens1f0-TxRx-0\n"
      "  65:          0          0   PCI-MSI 524289-edge      ens1f0x-TxRx-0\n"
      " 99999999999: 1 2 junk\n"
      "LOC:   1   2   Local timer interrupts\n";
  const std::vector<InterruptLine> all = parse_interrupts(text);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].count, 30);
  EXPECT_TRUE(interrupt_of(all[0], "0000:3b:00.0", {"ens1f0"}));
  EXPECT_FALSE(interrupt_of(all[1], "0000:3b:00.0", {"ens1f0"}));
  EXPECT_TRUE(parse_interrupts("no header\n 1: 2 3\n").empty());
}

}  // namespace
}  // namespace plumb::check
