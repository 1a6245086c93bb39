#include "topo/binding.h"

#include <gtest/gtest.h>

namespace plumb::topo {
namespace {

const std::string kFixture = std::string(PLUMB_TEST_FIXTURES) + "/topo/dgx-like-2numa.xml";

const Topology& fixture() {
  static const Topology kTopo = load_topology_xml(kFixture);
  return kTopo;
}

CpuSet cpus(const char* list) { return parse_cpu_list(list, "test"); }

TEST(NumaCoverage, OfBindingsOnTheFixture) {
  EXPECT_EQ(numa_nodes_of(fixture(), cpus("0-15,32-47")), std::vector<int>{0});
  EXPECT_EQ(numa_nodes_of(fixture(), cpus("3")), std::vector<int>{0});
  EXPECT_EQ(numa_nodes_of(fixture(), cpus("48")), std::vector<int>{1});
  EXPECT_EQ(numa_nodes_of(fixture(), cpus("0-63")), (std::vector<int>{0, 1}));
  EXPECT_EQ(numa_nodes_of(fixture(), cpus("15-16")), (std::vector<int>{0, 1}));
  EXPECT_EQ(numa_nodes_of(fixture(), cpus("")), std::vector<int>{});
  EXPECT_EQ(numa_nodes_of(fixture(), cpus("64-127")), std::vector<int>{});  // not on this host
}

TEST(ChooseAccelerator, LocalRankAlone) {
  const AcceleratorChoice c = choose_accelerator({{"LOCAL_RANK", "2"}});
  EXPECT_EQ(c.index, 2);
  EXPECT_EQ(c.named_by, "LOCAL_RANK=2");
  EXPECT_EQ(c.problem, "");
}

TEST(ChooseAccelerator, LocalRankThroughCudaVisibleDevices) {
  const AcceleratorChoice c =
      choose_accelerator({{"LOCAL_RANK", "1"}, {"CUDA_VISIBLE_DEVICES", "4,5,6,7"}});
  EXPECT_EQ(c.index, 5);
  EXPECT_EQ(c.named_by, "LOCAL_RANK=1, CUDA_VISIBLE_DEVICES=4,5,6,7");
  EXPECT_EQ(c.problem, "");
}

TEST(ChooseAccelerator, LocalRankThroughAscendVisibleDevices) {
  const AcceleratorChoice c =
      choose_accelerator({{"LOCAL_RANK", "3"}, {"ASCEND_RT_VISIBLE_DEVICES", "0,2,4,6"}});
  EXPECT_EQ(c.index, 6);
  EXPECT_EQ(c.named_by, "LOCAL_RANK=3, ASCEND_RT_VISIBLE_DEVICES=0,2,4,6");
}

TEST(ChooseAccelerator, OneVisibleDeviceWithoutLocalRank) {
  EXPECT_EQ(choose_accelerator({{"CUDA_VISIBLE_DEVICES", "3"}}).index, 3);
  EXPECT_EQ(choose_accelerator({{"ASCEND_RT_VISIBLE_DEVICES", "7"}}).index, 7);
  // Several visible and no LOCAL_RANK: nothing says which one this process uses.
  const AcceleratorChoice none = choose_accelerator({{"CUDA_VISIBLE_DEVICES", "0,1"}});
  EXPECT_EQ(none.index, -1);
  EXPECT_EQ(none.named_by, "");
  EXPECT_EQ(none.problem, "");
  EXPECT_EQ(choose_accelerator({}).index, -1);
}

TEST(ChooseAccelerator, UuidsCannotBeMapped) {
  const AcceleratorChoice c = choose_accelerator(
      {{"LOCAL_RANK", "0"},
       {"CUDA_VISIBLE_DEVICES", "GPU-8f2c3a51-6a0e-4b1e-9d3c-2f1e0b7a9c44,GPU-1b2c3d4e"}});
  EXPECT_EQ(c.index, -1);
  EXPECT_EQ(c.problem,
            "CUDA_VISIBLE_DEVICES names device 'GPU-8f2c3a51-6a0e-4b1e-9d3c-2f1e0b7a9c44', not an "
            "index (a UUID?): the accelerator cannot be mapped to a PCI device");
  EXPECT_EQ(choose_accelerator({{"CUDA_VISIBLE_DEVICES", "MIG-0d5e"}}).index, -1);
}

TEST(ChooseAccelerator, BadLocalRankOrShortList) {
  const AcceleratorChoice bad = choose_accelerator({{"LOCAL_RANK", "x"}});
  EXPECT_EQ(bad.index, -1);
  EXPECT_EQ(bad.problem, "LOCAL_RANK=x is not a rank number");
  const AcceleratorChoice shorter =
      choose_accelerator({{"LOCAL_RANK", "2"}, {"CUDA_VISIBLE_DEVICES", "0,1"}});
  EXPECT_EQ(shorter.index, -1);
  EXPECT_EQ(shorter.problem, "CUDA_VISIBLE_DEVICES lists 2 device(s), none at position 2");
}

TEST(MakeBinding, ResolvesTheAcceleratorToItsPciDevice) {
  const RankBinding b = make_binding(fixture(), 5, 5, cpus("16-31,48-63"),
                                     {{"LOCAL_RANK", "1"}, {"CUDA_VISIBLE_DEVICES", "4,5,6,7"}});
  EXPECT_EQ(b.host, "host-a");
  EXPECT_EQ(b.numa_nodes, std::vector<int>{1});
  EXPECT_EQ(b.accelerator.index, 5);
  EXPECT_EQ(b.accelerator_bus_id, "0000:ab:00.0");
  EXPECT_EQ(b.accelerator_numa, 1);
  EXPECT_EQ(check_binding(fixture(), b), std::nullopt);  // bound where its GPU is: fine
}

TEST(MakeBinding, AcceleratorBeyondTheHost) {
  const RankBinding b = make_binding(fixture(), 0, 0, cpus("0"), {{"LOCAL_RANK", "8"}});
  EXPECT_EQ(b.accelerator.index, -1);
  EXPECT_EQ(b.accelerator.problem, "accelerator 8 is named but host-a shows 8 accelerator(s)");
  EXPECT_EQ(b.accelerator_bus_id, "");
  EXPECT_EQ(check_binding(fixture(), b), std::nullopt);
}

TEST(CheckBinding, AcrossNumaNodesSuggestsTheAcceleratorsNode) {
  const RankBinding b = make_binding(fixture(), 3, 3, cpus("0-63"), {{"LOCAL_RANK", "5"}});
  const std::optional<BindingWarning> w = check_binding(fixture(), b);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->text,
            "rank 3 on host-a is bound to cpus 0-63, across NUMA nodes 0,1; bind it to NUMA node 1 "
            "(cpus 16-31,48-63), e.g. mpirun --bind-to numa or numactl --cpunodebind=1");
  EXPECT_EQ(w->rank, 3);
  EXPECT_EQ(w->host, "host-a");
  EXPECT_EQ(w->numa_node, 1);
  EXPECT_EQ(format_cpu_list(w->cpus), "16-31,48-63");
}

TEST(CheckBinding, AcrossNumaNodesWithoutAcceleratorSpreadsByLocalRank) {
  const RankBinding even = make_binding(fixture(), 0, 0, cpus("0-63"), {});
  const RankBinding odd = make_binding(fixture(), 1, 1, cpus("0-63"), {});
  EXPECT_EQ(check_binding(fixture(), even)->numa_node, 0);
  EXPECT_EQ(check_binding(fixture(), odd)->numa_node, 1);
  EXPECT_EQ(check_binding(fixture(), even)->text,
            "rank 0 on host-a is bound to cpus 0-63, across NUMA nodes 0,1; bind it to NUMA node 0 "
            "(cpus 0-15,32-47), e.g. mpirun --bind-to numa or numactl --cpunodebind=0");
}

TEST(CheckBinding, AwayFromTheAcceleratorsNode) {
  const RankBinding b = make_binding(fixture(), 2, 2, cpus("0-15,32-47"),
                                     {{"LOCAL_RANK", "2"}, {"CUDA_VISIBLE_DEVICES", "3,4,5,6"}});
  const std::optional<BindingWarning> w = check_binding(fixture(), b);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->text,
            "rank 2 on host-a uses accelerator 5 on NUMA node 1 but is bound to NUMA node 0; bind "
            "it to cpus 16-31,48-63 (NUMA node 1)");
  EXPECT_EQ(w->numa_node, 1);
}

TEST(CheckBinding, NothingToSayOnOneNodeOrWithoutAffinity) {
  EXPECT_EQ(check_binding(fixture(), make_binding(fixture(), 0, 0, cpus("4-7"), {})), std::nullopt);
  EXPECT_EQ(check_binding(fixture(), make_binding(fixture(), 0, 0, {}, {{"LOCAL_RANK", "6"}})),
            std::nullopt);
}

TEST(CurrentAffinity, IsThisProcessesCpus) {
  const CpuSet mine = current_affinity();
  EXPECT_FALSE(mine.empty());
  EXPECT_LE(mine.size(), static_cast<size_t>(kMaxCpu + 1));
}

}  // namespace
}  // namespace plumb::topo
