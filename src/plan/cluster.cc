#include "plan/cluster.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/strings.h"
#include "common/yaml_strict.h"

namespace plumb::plan {
namespace {

using Problems = std::vector<std::string>;

const std::vector<std::string> kKeys = {"name",
                                        "devices_per_node",
                                        "nodes_per_rack",
                                        "scaleup_gbps_per_device",
                                        "rail_gbps_per_device",
                                        "spine_gbps_per_device",
                                        "oversubscription",
                                        "latency_us",
                                        "efficiency"};
const std::vector<std::string> kLayers = {"node", "rail", "spine"};
// devices_per_node, nodes_per_rack: far above any real cluster, low enough for an int.
constexpr int kMaxClusterCount = 1'000'000;
constexpr NumberRange kCount{1, kMaxClusterCount, false, true};
// Bandwidths per device, GB/s: far above any link built (NVLink 5: 900 GB/s one way), and no
// slower than 10 MB/s, which keeps every time the planner derives printable.
constexpr NumberRange kGbps{1e-2, 1e6};
// Rail bandwidth per device over spine bandwidth per device: 1 is non-blocking (a faster spine
// is given as spine_gbps_per_device).
constexpr NumberRange kOversubscription{1, 1e3};
// One step's latency, µs: a second is far beyond any network.
constexpr NumberRange kLatencyUs{0, 1e6, true};
// An achievable fraction of a link's bandwidth.
constexpr NumberRange kEfficiency{1e-2, 1};

// A number within `range` at node[key], or nothing; a wrong value is a problem naming line and
// key. `shown` is the key as the message names it ("latency_us.rail"); empty: `key`.
std::optional<double> number(const YAML::Node& node, const std::string& key,
                             const NumberRange& range, const std::string& where,
                             Problems& problems, const std::string& shown = {}) {
  const YAML::Node value = node[key];
  if (!value) return std::nullopt;
  std::string problem;
  if (auto v = yaml_number(value, range, problem)) return v;
  problems.push_back(fmt::format("{}:{}: '{}' {}", where, yaml_line(value),
                                 shown.empty() ? key : shown, problem));
  return std::nullopt;
}

void check_keys(const YAML::Node& map, const std::vector<std::string>& known,
                std::string_view where, const std::string& path, Problems& problems) {
  for (const YamlProblem& p : key_problems(map, known, where)) {
    problems.push_back(fmt::format("{}:{}: {}", path, p.line, p.message));
  }
}

// latency_us / efficiency: a map of layer → value.
void read_per_layer(const YAML::Node& root, const char* key, const NumberRange& range,
                    const std::string& path, const std::string& prefix, Problems& problems,
                    double scale, std::array<double*, 3> targets) {
  const YAML::Node node = root[key];
  if (!node) return;
  if (!node.IsMap()) {
    problems.push_back(fmt::format("{}:{}: '{}{}' must map node/rail/spine to numbers", path,
                                   yaml_line(node), prefix, key));
    return;
  }
  check_keys(node, kLayers, prefix + key, path, problems);
  for (size_t i = 0; i < kLayers.size(); ++i) {
    const std::string shown = prefix + key + "." + kLayers[i];
    if (auto v = number(node, kLayers[i], range, path, problems, shown)) *targets[i] = *v * scale;
  }
}

}  // namespace

const char* net_layer_name(NetLayer layer) {
  switch (layer) {
    case NetLayer::kNode: return "node";
    case NetLayer::kRail: return "rail";
    case NetLayer::kSpine: return "spine";
  }
  return "";
}

ClusterSpec default_cluster(const HardwareSpec& hw) {
  // The hardware file's key, and the cluster file's key that gives the same bandwidth.
  Problems missing, cluster_keys;
  if (!hw.scaleup_gbps_per_device) {
    missing.push_back("scaleup_gbps_per_device");
    cluster_keys.push_back("scaleup_gbps_per_device");
  }
  if (!hw.scaleout_gbps_per_device) {
    missing.push_back("scaleout_gbps_per_device");
    cluster_keys.push_back("rail_gbps_per_device");
  }
  if (!missing.empty()) {
    throw Error(fmt::format("{}: the hardware file gives no {}: give {} in a --cluster file",
                            hw.name, join(missing, " and no "), join(cluster_keys, " and ")));
  }
  ClusterSpec c;
  c.devices_per_node = hw.devices_per_node.value_or(8);
  c.node = {*hw.scaleup_gbps_per_device * kScaleUpEfficiency, kNodeLatencyS};
  c.rail = {*hw.scaleout_gbps_per_device * kScaleOutEfficiency, kRailLatencyS};
  c.spine = {c.rail.gbps, kSpineLatencyS};
  return c;
}

const std::vector<std::string>& cluster_keys() { return kKeys; }

ClusterSpec read_cluster(const YAML::Node& map, const HardwareSpec& hw, const std::string& path,
                         const std::string& where, std::vector<std::string>& problems) {
  check_keys(map, kKeys, where, path, problems);
  // Keys are named "cluster.rail_gbps_per_device" inside a run set, plainly in a cluster file.
  const std::string prefix = where.empty() ? "" : where + ".";
  const auto num = [&](const std::string& key, const NumberRange& range) {
    return number(map, key, range, path, problems, prefix + key);
  };
  HardwareSpec base = hw;
  if (auto v = num("scaleup_gbps_per_device", kGbps)) base.scaleup_gbps_per_device = v;
  if (auto v = num("rail_gbps_per_device", kGbps)) base.scaleout_gbps_per_device = v;
  if (auto v = num("devices_per_node", kCount)) base.devices_per_node = static_cast<int>(*v);
  // Every other key is still read when these are wrong: all problems in one message.
  ClusterSpec c;
  try {
    c = default_cluster(base);
  } catch (const Error& e) {
    const std::string at = where.empty() ? path : fmt::format("{}:{}", path, yaml_line(map));
    problems.push_back(fmt::format("{}: {}", at, e.what()));
  }
  if (map["name"]) {
    if (map["name"].IsScalar()) {
      c.name = map["name"].Scalar();
    } else {
      problems.push_back(fmt::format("{}:{}: '{}name' must be a string", path,
                                     yaml_line(map["name"]), prefix));
    }
  }
  if (auto v = num("nodes_per_rack", kCount)) c.nodes_per_rack = static_cast<int>(*v);
  if (auto v = num("oversubscription", kOversubscription)) c.oversubscription = *v;
  c.spine.gbps = c.rail.gbps / c.oversubscription;
  if (auto v = num("spine_gbps_per_device", kGbps)) c.spine.gbps = *v * kScaleOutEfficiency;
  std::array<double, 3> eff{kScaleUpEfficiency, kScaleOutEfficiency, kScaleOutEfficiency};
  read_per_layer(map, "efficiency", kEfficiency, path, prefix, problems, 1,
                 {&eff[0], &eff[1], &eff[2]});
  c.node.gbps *= eff[0] / kScaleUpEfficiency;
  c.rail.gbps *= eff[1] / kScaleOutEfficiency;
  c.spine.gbps *= eff[2] / kScaleOutEfficiency;
  read_per_layer(map, "latency_us", kLatencyUs, path, prefix, problems, 1e-6,
                 {&c.node.latency_s, &c.rail.latency_s, &c.spine.latency_s});
  return c;
}

namespace {

ClusterSpec cluster_from_root(const YAML::Node& root, const std::string& path,
                              const HardwareSpec& hw) {
  if (!root.IsMap()) throw Error(fmt::format("{}: expected a map of cluster keys", path));
  Problems problems;
  const ClusterSpec c = read_cluster(root, hw, path, {}, problems);
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return c;
}

}  // namespace

ClusterSpec load_cluster(const std::string& path, const HardwareSpec& hw) {
  return cluster_from_root(load_yaml_file(path, "cluster file"), path, hw);
}

ClusterSpec cluster_from_text(std::string_view text, const std::string& source,
                              const HardwareSpec& hw) {
  return cluster_from_root(load_yaml(text, source), source, hw);
}

Link layer_link(const ClusterSpec& c, NetLayer layer) {
  switch (layer) {
    case NetLayer::kNode: return c.node;
    case NetLayer::kRail: return c.rail;
    case NetLayer::kSpine: return c.spine;
  }
  return c.spine;
}

}  // namespace plumb::plan
