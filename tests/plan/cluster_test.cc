// The cluster a plan runs on: defaults from the hardware file and a --cluster file over them,
// with every problem of the file named by file, line and key.
#include "plan/cluster.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "common/error.h"
#include "support/subprocess.h"

namespace plumb::plan {
namespace {

// A device with 450 GB/s of scale-up and 50 GB/s of scale-out, 8 to a node.
HardwareSpec gpu() {
  HardwareSpec hw;
  hw.name = "test-gpu";
  hw.devices_per_node = 8;
  hw.scaleup_gbps_per_device = 450;
  hw.scaleout_gbps_per_device = 50;
  return hw;
}

// A cluster file with `text` in a fresh directory.
std::string cluster_file(const std::string& name, const std::string& text) {
  const std::string path = test::temp_dir(name) + "/cluster.yaml";
  test::write_file(path, text);
  return path;
}

std::string load_error(const std::string& path, const HardwareSpec& hw = gpu()) {
  try {
    load_cluster(path, hw);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Node 450 · 0.77 = 346.5 GB/s at 2 µs; rail 50 · 0.92 = 46 GB/s at 6 µs; spine as the rail
// (no oversubscription) at 8 µs; 32 nodes per rack.
TEST(Cluster, DefaultsFromTheHardware) {
  const ClusterSpec c = default_cluster(gpu());
  EXPECT_EQ(c.name, "default");
  EXPECT_EQ(c.devices_per_node, 8);
  EXPECT_EQ(c.nodes_per_rack, kDefaultNodesPerRack);
  EXPECT_DOUBLE_EQ(c.oversubscription, 1);
  EXPECT_DOUBLE_EQ(c.node.gbps, 450 * kScaleUpEfficiency);
  EXPECT_DOUBLE_EQ(c.node.gbps, 346.5);
  EXPECT_DOUBLE_EQ(c.node.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(c.rail.gbps, 50 * kScaleOutEfficiency);
  EXPECT_DOUBLE_EQ(c.rail.gbps, 46);
  EXPECT_DOUBLE_EQ(c.rail.latency_s, 6e-6);
  EXPECT_DOUBLE_EQ(c.spine.gbps, 46);
  EXPECT_DOUBLE_EQ(c.spine.latency_s, 8e-6);
}

TEST(Cluster, DevicesPerNodeDefaultsToEight) {
  HardwareSpec hw = gpu();
  hw.devices_per_node = std::nullopt;
  EXPECT_EQ(default_cluster(hw).devices_per_node, 8);
  hw.devices_per_node = 4;
  EXPECT_EQ(default_cluster(hw).devices_per_node, 4);
}

TEST(Cluster, LayerLinks) {
  const ClusterSpec c = default_cluster(gpu());
  EXPECT_DOUBLE_EQ(layer_link(c, NetLayer::kNode).gbps, 346.5);
  EXPECT_DOUBLE_EQ(layer_link(c, NetLayer::kRail).latency_s, 6e-6);
  EXPECT_DOUBLE_EQ(layer_link(c, NetLayer::kSpine).latency_s, 8e-6);
  EXPECT_EQ(std::string(net_layer_name(NetLayer::kNode)), "node");
  EXPECT_EQ(std::string(net_layer_name(NetLayer::kRail)), "rail");
  EXPECT_EQ(std::string(net_layer_name(NetLayer::kSpine)), "spine");
}

TEST(Cluster, MissingScaleOutIsAnError) {
  HardwareSpec hw = gpu();
  hw.scaleout_gbps_per_device = std::nullopt;
  try {
    default_cluster(hw);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "test-gpu: the hardware file gives no scaleout_gbps_per_device: give "
              "rail_gbps_per_device in a --cluster file");
  }
  hw.scaleup_gbps_per_device = std::nullopt;
  try {
    default_cluster(hw);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "test-gpu: the hardware file gives no scaleup_gbps_per_device and no "
              "scaleout_gbps_per_device: give scaleup_gbps_per_device and rail_gbps_per_device "
              "in a --cluster file");
  }
}

// Oversubscription 2 halves the spine: 46 / 2 = 23 GB/s. Latencies are in µs.
TEST(ClusterFile, RackOversubscriptionAndLatencies) {
  const std::string path = cluster_file("cluster-rack",
                                        "name: pod-a\n"
                                        "nodes_per_rack: 16\n"
                                        "oversubscription: 2\n"
                                        "latency_us: {node: 3, rail: 7, spine: 12}\n");
  const ClusterSpec c = load_cluster(path, gpu());
  EXPECT_EQ(c.name, "pod-a");
  EXPECT_EQ(c.nodes_per_rack, 16);
  EXPECT_DOUBLE_EQ(c.oversubscription, 2);
  EXPECT_DOUBLE_EQ(c.node.gbps, 346.5);
  EXPECT_DOUBLE_EQ(c.rail.gbps, 46);
  EXPECT_DOUBLE_EQ(c.spine.gbps, 23);
  EXPECT_DOUBLE_EQ(c.node.latency_s, 3e-6);
  EXPECT_DOUBLE_EQ(c.rail.latency_s, 7e-6);
  EXPECT_DOUBLE_EQ(c.spine.latency_s, 12e-6);
}

// Efficiencies replace the default fractions: node 400 · 0.8 = 320, rail 100 · 0.9 = 90,
// spine 100 · 0.85 / 2 = 42.5 GB/s (oversubscription 2). Layers not named keep the defaults.
TEST(ClusterFile, EfficiencyPerLayer) {
  const std::string path = cluster_file("cluster-efficiency",
                                        "devices_per_node: 4\n"
                                        "scaleup_gbps_per_device: 400\n"
                                        "rail_gbps_per_device: 100\n"
                                        "oversubscription: 2\n"
                                        "efficiency:\n"
                                        "  node: 0.8\n"
                                        "  rail: 0.9\n"
                                        "  spine: 0.85\n");
  const ClusterSpec c = load_cluster(path, gpu());
  EXPECT_EQ(c.devices_per_node, 4);
  EXPECT_DOUBLE_EQ(c.node.gbps, 320);
  EXPECT_DOUBLE_EQ(c.rail.gbps, 90);
  EXPECT_DOUBLE_EQ(c.spine.gbps, 42.5);
  const ClusterSpec partial =
      load_cluster(cluster_file("cluster-efficiency-rail", "efficiency: {rail: 0.5}\n"), gpu());
  EXPECT_DOUBLE_EQ(partial.node.gbps, 346.5);
  EXPECT_DOUBLE_EQ(partial.rail.gbps, 25);
  EXPECT_DOUBLE_EQ(partial.spine.gbps, 46);
}

// spine_gbps_per_device names the spine outright: 30 · 0.92 = 27.6, oversubscription aside.
TEST(ClusterFile, SpineBandwidthOverridesOversubscription) {
  const std::string path = cluster_file("cluster-spine",
                                        "oversubscription: 4\n"
                                        "spine_gbps_per_device: 30\n");
  EXPECT_DOUBLE_EQ(load_cluster(path, gpu()).spine.gbps, 27.6);
}

// A hardware file without scale-out works when the cluster file gives the rail.
TEST(ClusterFile, SuppliesWhatTheHardwareLacks) {
  HardwareSpec hw = gpu();
  hw.scaleout_gbps_per_device = std::nullopt;
  const std::string path = cluster_file("cluster-rail", "rail_gbps_per_device: 25\n");
  const ClusterSpec c = load_cluster(path, hw);
  EXPECT_DOUBLE_EQ(c.rail.gbps, 23);
  EXPECT_DOUBLE_EQ(c.spine.gbps, 23);
}

TEST(ClusterFile, UnknownKeySuggestsTheClosest) {
  const std::string path = cluster_file("cluster-unknown", "nodes_per_rak: 16\n");
  EXPECT_EQ(load_error(path),
            path +
                ":1: unknown key 'nodes_per_rak' (did you mean 'nodes_per_rack'?); expected one of "
                "name, devices_per_node, nodes_per_rack, scaleup_gbps_per_device, "
                "rail_gbps_per_device, spine_gbps_per_device, oversubscription, latency_us, "
                "efficiency");
}

TEST(ClusterFile, NonNumberNamesLineAndKey) {
  const std::string path = cluster_file("cluster-nan", "name: x\noversubscription: lots\n");
  EXPECT_EQ(load_error(path),
            path + ":2: 'oversubscription' must be a number from 1 to 1000, got 'lots'");
}

// Every problem of the file at once, one a line, in the order the keys are read.
TEST(ClusterFile, EveryProblemAtOnce) {
  const std::string path = cluster_file("cluster-bad",
                                        "nodes_per_rack: 0\n"
                                        "oversubscription: lots\n"
                                        "latency_us: {node: 1, rail: -2}\n"
                                        "efficiency: {spine: 1.5}\n");
  EXPECT_EQ(load_error(path),
            path + ":1: 'nodes_per_rack' must be a whole number from 1 to 1000000, got '0'\n" +
                path + ":2: 'oversubscription' must be a number from 1 to 1000, got 'lots'\n" +
                path + ":4: 'efficiency.spine' must be a number from 0.01 to 1, got '1.5'\n" +
                path + ":3: 'latency_us.rail' must be a number above 0 and at most 1e+06, got '-2'");
}

TEST(ClusterFile, EveryProblemOfTheBandwidthKeysAtOnce) {
  const std::string path = cluster_file("cluster-bad-bandwidth",
                                        "efficency: {node: 0.8}\n"
                                        "rail_gbps_per_device: fast\n"
                                        "devices_per_node: -8\n");
  EXPECT_EQ(load_error(path),
            path +
                ":1: unknown key 'efficency' (did you mean 'efficiency'?); "
                "expected one of name, devices_per_node, nodes_per_rack, "
                "scaleup_gbps_per_device, rail_gbps_per_device, spine_gbps_per_device, "
                "oversubscription, latency_us, efficiency\n" +
                path + ":2: 'rail_gbps_per_device' must be a number from 0.01 to 1e+06, got "
                "'fast'\n" +
                path + ":3: 'devices_per_node' must be a whole number from 1 to 1000000, got '-8'");
}

// An unknown key and a bad latency are two problems of one file: both should be reported.
TEST(ClusterFile, ProblemsAcrossAllKeysAtOnce) {
  const std::string path = cluster_file("cluster-bad-mixed",
                                        "nodes_per_rak: 16\n"
                                        "latency_us: {rail: -2}\n");
  const std::string expected =
      path +
      ":1: unknown key 'nodes_per_rak' (did you mean 'nodes_per_rack'?); expected one of "
      "name, devices_per_node, nodes_per_rack, scaleup_gbps_per_device, "
      "rail_gbps_per_device, spine_gbps_per_device, oversubscription, latency_us, "
      "efficiency\n" +
      path + ":2: 'latency_us.rail' must be a number above 0 and at most 1e+06, got '-2'";
  EXPECT_EQ(load_error(path), expected);
}

TEST(ClusterFile, LatencyMustBeAMap) {
  const std::string path = cluster_file("cluster-latency", "name: x\nlatency_us: 5\n");
  EXPECT_EQ(load_error(path), path + ":2: 'latency_us' must map node/rail/spine to numbers");
}

// A count must be a whole number of at least 1: nodes_per_rack 0.5 would make every group that
// leaves a node cross the spine.
TEST(ClusterFile, FractionalCountIsAnError) {
  const std::string path = cluster_file("cluster-fraction", "nodes_per_rack: 0.5\n");
  try {
    const ClusterSpec c = load_cluster(path, gpu());
    FAIL() << "nodes_per_rack: 0.5 was accepted as " << c.nodes_per_rack;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":1: 'nodes_per_rack'"), std::string::npos)
        << e.what();
  }
}

TEST(ClusterFile, MissingFile) {
  const std::string path = test::temp_dir("cluster-missing") + "/absent.yaml";
  EXPECT_EQ(load_error(path), path + ": cannot read the cluster file: No such file or directory");
  const std::string dir = test::temp_dir("cluster-dir");
  EXPECT_EQ(load_error(dir), dir + ": is a directory, not a cluster file");
}

// Issue 10: a repeated key (the first value was kept) and an unknown key inside latency_us are
// errors at their lines.
TEST(ClusterFile, DuplicateAndNestedUnknownKeys) {
  const std::string path = cluster_file("cluster-duplicate",
                                        "nodes_per_rack: 16\n"
                                        "latency_us: {node: 2, rall: 5}\n"
                                        "nodes_per_rack: 4\n");
  EXPECT_EQ(load_error(path),
            path + ":3: duplicate key 'nodes_per_rack' (first at line 1)\n" + path +
                ":2: unknown key 'rall' in latency_us (did you mean 'rail'?); expected one of "
                "node, rail, spine");
}

// A vanishing efficiency or bandwidth made step times of 300 digits: each has a floor.
TEST(ClusterFile, VanishingBandwidthIsRefused) {
  const std::string path = cluster_file("cluster-tiny", "efficiency: {node: 1e-300}\n"
                                                        "spine_gbps_per_device: 1e-300\n");
  EXPECT_EQ(load_error(path),
            path + ":2: 'spine_gbps_per_device' must be a number from 0.01 to 1e+06, got "
                   "'1e-300'\n" +
                path + ":1: 'efficiency.node' must be a number from 0.01 to 1, got '1e-300'");
}

}  // namespace
}  // namespace plumb::plan
