#include "plan/cluster.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
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
// devices_per_node, nodes_per_rack: far above any real cluster, low enough for an int.
constexpr int kMaxCount = 1'000'000;

// A positive number at node[key], or nothing; a wrong value is a problem naming line and key.
// `shown` is the key as the message names it ("latency_us.rail"); empty: `key`.
std::optional<double> number(const YAML::Node& node, const std::string& key,
                             const std::string& where, Problems& problems,
                             const std::string& shown = {}) {
  const YAML::Node value = node[key];
  if (!value) return std::nullopt;
  try {
    if (value.IsScalar()) {
      const double v = value.as<double>();
      if (std::isfinite(v) && v > 0) return v;
    }
  } catch (const YAML::Exception&) {
  }
  problems.push_back(fmt::format("{}:{}: '{}' must be a positive number", where,
                                 value.Mark().line + 1, shown.empty() ? key : shown));
  return std::nullopt;
}

void check_keys(const YAML::Node& root, const std::string& path, Problems& problems) {
  const std::vector<std::string> known(std::begin(kKeys), std::end(kKeys));
  for (const auto& item : root) {
    if (!item.first.IsScalar()) {
      problems.push_back(fmt::format("{}:{}: a key must be a plain name, one of {}", path,
                                     item.first.Mark().line + 1, join(known, ", ")));
      continue;
    }
    const std::string key = item.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      problems.push_back(unknown_name(path, "key", key, known));
    }
  }
}

// A whole number from 1 to kMaxCount at node[key], or nothing.
std::optional<int> count(const YAML::Node& node, const std::string& key, const std::string& where,
                         Problems& problems) {
  const std::optional<double> v = number(node, key, where, problems);
  if (!v) return std::nullopt;
  if (*v != std::floor(*v) || *v > kMaxCount) {
    problems.push_back(fmt::format("{}:{}: '{}' must be a whole number from 1 to {}", where,
                                   node[key].Mark().line + 1, key, kMaxCount));
    return std::nullopt;
  }
  return static_cast<int>(*v);
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
    const std::string shown = std::string(key) + "." + kLayers[i];
    if (auto v = number(node, kLayers[i], path, problems, shown)) *targets[i] = *v * scale;
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
  if (auto v = count(root, "devices_per_node", path, problems)) base.devices_per_node = *v;
  // Every other key is still read when these are wrong: all problems in one message.
  ClusterSpec c;
  try {
    c = default_cluster(base);
  } catch (const Error& e) {
    problems.push_back(e.what());
  }
  if (root["name"]) {
    if (root["name"].IsScalar()) {
      c.name = root["name"].as<std::string>();
    } else {
      problems.push_back(
          fmt::format("{}:{}: 'name' must be a string", path, root["name"].Mark().line + 1));
    }
  }
  if (auto v = count(root, "nodes_per_rack", path, problems)) c.nodes_per_rack = *v;
  if (auto v = number(root, "oversubscription", path, problems)) c.oversubscription = *v;
  c.spine.gbps = c.rail.gbps / c.oversubscription;
  if (auto v = number(root, "spine_gbps_per_device", path, problems)) {
    c.spine.gbps = *v * kScaleOutEfficiency;
  }
  std::array<double, 3> eff{kScaleUpEfficiency, kScaleOutEfficiency, kScaleOutEfficiency};
  read_per_layer(root, "efficiency", path, problems, 1, {&eff[0], &eff[1], &eff[2]});
  for (size_t i = 0; i < eff.size(); ++i) {
    if (eff[i] > 1) {
      problems.push_back(fmt::format("{}:{}: 'efficiency.{}' is {}, a fraction: at most 1", path,
                                     root["efficiency"][kLayers[i]].Mark().line + 1, kLayers[i],
                                     eff[i]));
    }
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
