// The cluster a plan runs on: devices per node (the scale-up domain), nodes per rack, and the
// bandwidth and latency of the three layers a collective can cross — node (NVLink, HCCS, ...),
// rail (scale-out NICs to a leaf switch, inside a rack / scalable unit) and spine (between racks).
// Defaults come from the hardware file; `--cluster FILE` overrides any of them.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "plan/collective_cost.h"
#include "plan/hardware.h"

namespace plumb::plan {

enum class NetLayer { kNode, kRail, kSpine };
const char* net_layer_name(NetLayer layer);

// Achievable fractions of link bandwidth and per-step latencies, from public nccl-tests figures
// (docs/plan.md, "Network"): 8×A100 NVLink allreduce reaches ~230 of 300 GB/s busbw; HDR/NDR
// InfiniBand reaches ~92% of line rate.
inline constexpr double kScaleUpEfficiency = 0.77;
inline constexpr double kScaleOutEfficiency = 0.92;
inline constexpr double kNodeLatencyS = 2e-6;
inline constexpr double kRailLatencyS = 6e-6;
inline constexpr double kSpineLatencyS = 8e-6;
// NVIDIA DGX SuperPOD reference architecture: a scalable unit is 32 nodes on one rail-optimised,
// non-blocking leaf group.
inline constexpr int kDefaultNodesPerRack = 32;

struct ClusterSpec {
  std::string name = "default";
  int devices_per_node = 8;
  int nodes_per_rack = kDefaultNodesPerRack;
  double oversubscription = 1;  // rail bandwidth / spine bandwidth per device
  Link node;                    // effective (after the achievable fraction)
  Link rail;
  Link spine;
};

// From the hardware file alone; scale-out absent → an error naming the missing key.
ClusterSpec default_cluster(const HardwareSpec& hw);

// Reads a cluster file over the defaults. Keys (all optional): name, devices_per_node,
// nodes_per_rack, scaleup_gbps_per_device, rail_gbps_per_device, spine_gbps_per_device,
// oversubscription, latency_us {node, rail, spine}, efficiency {node, rail, spine}. Every problem
// at once, naming the file, line and key.
ClusterSpec load_cluster(const std::string& path, const HardwareSpec& hw);
// The same from a file's text; `source` names it in messages.
ClusterSpec cluster_from_text(std::string_view text, const std::string& source,
                              const HardwareSpec& hw);

// The keys a cluster map may give, in the order above.
const std::vector<std::string>& cluster_keys();

// The same keys read from a YAML map over the hardware's defaults: a cluster file's top level
// (`where` empty), or a map inside another file (a run set's `cluster:`, `where` "cluster": keys
// are then named "cluster.rail_gbps_per_device" in messages). Each problem, naming `path`, the
// line and the key, is added to `problems`.
ClusterSpec read_cluster(const YAML::Node& map, const HardwareSpec& hw, const std::string& path,
                         const std::string& where, std::vector<std::string>& problems);

Link layer_link(const ClusterSpec& c, NetLayer layer);

}  // namespace plumb::plan
