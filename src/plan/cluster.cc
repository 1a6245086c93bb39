#include "plan/cluster.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <vector>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::plan {
namespace {

using Problems = std::vector<std::string>;

constexpr const char* kKeys[] = {"name",
                                 "devices_per_node",
                                 "nodes_per_rack",
                                 "scaleup_gbps_per_device",
                                 "rail_gbps_per_device",
                                 "spine_gbps_per_device",
                                 "oversubscription",
                                 "latency_us",
                                 "efficiency"};
constexpr const char* kLayers[] = {"node", "rail", "spine"};

// A positive number at node[key], or nothing; a wrong value is a problem naming line and key.
std::optional<double> number(const YAML::Node& node, const std::string& key,
                             const std::string& where, Problems& problems) {
  const YAML::Node value = node[key];
  if (!value) return std::nullopt;
  try {
    if (value.IsScalar() && value.as<double>() > 0) return value.as<double>();
  } catch (const YAML::Exception&) {
  }
  problems.push_back(
      fmt::format("{}:{}: '{}' must be a positive number", where, value.Mark().line + 1, key));
  return std::nullopt;
}

void check_keys(const YAML::Node& root, const std::string& path, Problems& problems) {
  const std::vector<std::string> known(std::begin(kKeys), std::end(kKeys));
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      problems.push_back(unknown_name(path, "key", key, known));
    }
  }
}

// latency_us / efficiency: a map of layer → value.
void read_per_layer(const YAML::Node& root, const char* key, const std::string& path,
                    Problems& problems, double scale, std::array<double*, 3> targets) {
  const YAML::Node node = root[key];
  if (!node) return;
  if (!node.IsMap()) {
    problems.push_back(fmt::format("{}:{}: '{}' must map node/rail/spine to numbers", path,
                                   node.Mark().line + 1, key));
    return;
  }
  for (size_t i = 0; i < 3; ++i) {
    if (auto v = number(node, kLayers[i], path + ": " + key, problems)) *targets[i] = *v * scale;
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
  Problems problems;
  if (!hw.scaleup_gbps_per_device) problems.push_back("scaleup_gbps_per_device");
  if (!hw.scaleout_gbps_per_device) problems.push_back("scaleout_gbps_per_device");
  if (!problems.empty()) {
    throw Error(fmt::format("{}: the hardware file gives no {}: name it in a --cluster file",
                            hw.name, join(problems, " and no ")));
  }
  ClusterSpec c;
  c.devices_per_node = hw.devices_per_node.value_or(8);
  c.node = {*hw.scaleup_gbps_per_device * kScaleUpEfficiency, kNodeLatencyS};
  c.rail = {*hw.scaleout_gbps_per_device * kScaleOutEfficiency, kRailLatencyS};
  c.spine = {c.rail.gbps, kSpineLatencyS};
  return c;
}

ClusterSpec load_cluster(const std::string& path, const HardwareSpec& hw) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw Error(fmt::format("{}: cannot read the cluster file", path));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) throw Error(fmt::format("{}: expected a map of cluster keys", path));
  Problems problems;
  check_keys(root, path, problems);
  HardwareSpec base = hw;
  if (auto v = number(root, "scaleup_gbps_per_device", path, problems)) base.scaleup_gbps_per_device = v;
  if (auto v = number(root, "rail_gbps_per_device", path, problems)) base.scaleout_gbps_per_device = v;
  if (auto v = number(root, "devices_per_node", path, problems)) base.devices_per_node = static_cast<int>(*v);
  if (!problems.empty()) throw Error(join(problems, "\n"));
  ClusterSpec c = default_cluster(base);
  if (root["name"]) c.name = root["name"].as<std::string>();
  if (auto v = number(root, "nodes_per_rack", path, problems)) c.nodes_per_rack = static_cast<int>(*v);
  if (auto v = number(root, "oversubscription", path, problems)) c.oversubscription = *v;
  c.spine.gbps = c.rail.gbps / c.oversubscription;
  if (auto v = number(root, "spine_gbps_per_device", path, problems)) {
    c.spine.gbps = *v * kScaleOutEfficiency;
  }
  std::array<double, 3> eff{kScaleUpEfficiency, kScaleOutEfficiency, kScaleOutEfficiency};
  read_per_layer(root, "efficiency", path, problems, 1, {&eff[0], &eff[1], &eff[2]});
  for (double e : eff) {
    if (e > 1) problems.push_back(fmt::format("{}: efficiency {} is a fraction: at most 1", path, e));
  }
  c.node.gbps *= eff[0] / kScaleUpEfficiency;
  c.rail.gbps *= eff[1] / kScaleOutEfficiency;
  c.spine.gbps *= eff[2] / kScaleOutEfficiency;
  read_per_layer(root, "latency_us", path, problems, 1e-6,
                 {&c.node.latency_s, &c.rail.latency_s, &c.spine.latency_s});
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return c;
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
