// Kubernetes nodes (`kubectl get nodes -o json`, a v1 List of Node objects, or one Node) into a
// site: racks and the tiers above them from node labels, accelerators from status.capacity.
//
// Only metadata.name, metadata.labels and status.capacity are kept while parsing (nlohmann's
// parser callback drops the rest, the image lists that make most of a node's size included).
// Without --rack-label the label families below are tried in order, as the projects document them:
//   Volcano label discovery (volcano.sh/docs/user-guide/how_to_use_hypernode_auto_discovery):
//     topologyA3: volcano.sh/hypernode under volcano.sh/hypercluster; topologyA2: volcano.sh/tor
//   NVIDIA Topograph (docs.nvidia.com/topograph, node labels): network.topology.nvidia.com/leaf,
//     .../spine, .../core
//   Kubernetes well-known labels (kubernetes.io/docs/reference/labels-annotations-taints):
//     topology.kubernetes.io/zone under topology.kubernetes.io/region
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <set>

#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"
#include "topo/site_topology.h"

namespace plumb::topo {
namespace {

using nlohmann::json;

struct LabelFamily {
  std::string name;
  std::string rack;
  std::vector<std::string> tiers;  // lowest first
};

const std::vector<LabelFamily>& label_families() {
  static const std::vector<LabelFamily> kFamilies = {
      {"Volcano topologyA3", "volcano.sh/hypernode", {"volcano.sh/hypercluster"}},
      {"Volcano topologyA2", "volcano.sh/tor", {}},
      {"NVIDIA Topograph", "network.topology.nvidia.com/leaf",
       {"network.topology.nvidia.com/spine", "network.topology.nvidia.com/core"}},
      {"Kubernetes zones", "topology.kubernetes.io/zone", {"topology.kubernetes.io/region"}},
  };
  return kFamilies;
}

// Accelerator resources a device plugin advertises in status.capacity.
const std::vector<std::string> kDeviceResources = {
    "nvidia.com/gpu",          // NVIDIA k8s-device-plugin
    "amd.com/gpu",             // ROCm k8s-device-plugin
    "huawei.com/Ascend910",    // Ascend mindxdl device plugin (910, 910B)
    "huawei.com/Ascend310P",
    "huawei.com/Ascend310",
};

// Keeps the keys topology import reads; `keys` is the path of keys down to the current depth.
struct KeepFilter {
  std::vector<std::string> keys;

  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    if (event != json::parse_event_t::key) return true;
    const auto d = static_cast<size_t>(depth);
    keys.resize(d + 1);
    keys[d] = parsed.get<std::string>();
    const std::string& k = keys[d];
    if (d == 1) return k == "items" || k == "kind" || k == "metadata" || k == "status";
    const size_t base = keys[1] == "items" ? 3 : 1;  // depth of a Node object's own keys
    if (d == base) return k == "metadata" || k == "status" || k == "kind";
    if (d == base + 1) {
      return (keys[base] == "metadata" && (k == "name" || k == "labels")) ||
             (keys[base] == "status" && k == "capacity");
    }
    return true;
  }
};

json parse_filtered(std::string_view text, const std::string& source) {
  KeepFilter filter;
  return parse_json(text, source, [&filter](int depth, json::parse_event_t event, json& parsed) {
    return filter(depth, event, parsed);
  });
}

std::map<std::string, std::string> string_map(const json& object, const std::string& field,
                                              const std::string& where, std::vector<std::string>& problems) {
  std::map<std::string, std::string> out;
  if (object.is_null()) return out;
  if (!object.is_object()) {
    problems.push_back(fmt::format("{}: {} must be an object", where, field));
    return out;
  }
  for (const auto& [key, value] : object.items()) {
    if (value.is_string()) {
      out.emplace(key, value.get<std::string>());
    } else {
      problems.push_back(fmt::format("{}: {}.{} must be a string", where, field, key));
    }
  }
  return out;
}

NodeDevices devices_of(const std::map<std::string, std::string>& capacity, const std::string& where,
                       std::vector<std::string>& problems) {
  NodeDevices devices;
  for (const std::string& resource : kDeviceResources) {
    const auto it = capacity.find(resource);
    if (it == capacity.end()) continue;
    long long count = -1;
    const std::string& text = it->second;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (ec != std::errc() || end != text.data() + text.size() || count < 0) {
      problems.push_back(fmt::format("{}: status.capacity.{}: expected a whole number of devices, "
                                     "got '{}'", where, resource, text));
    } else if (count > 0) {
      devices[resource] = count;
    }
  }
  return devices;
}

K8sNode read_node(const json& item, const std::string& where, std::vector<std::string>& problems) {
  K8sNode node;
  node.where = where;
  const json& metadata = item.is_object() && item.contains("metadata") ? item["metadata"] : json();
  if (!metadata.is_object() || !metadata.contains("name") || !metadata["name"].is_string() ||
      metadata["name"].get<std::string>().empty()) {
    problems.push_back(fmt::format("{}: expected a Node with metadata.name", where));
    return node;
  }
  node.name = metadata["name"].get<std::string>();
  node.where = fmt::format("{} (node '{}')", where, node.name);
  node.labels = string_map(metadata.value("labels", json()), "metadata.labels", node.where, problems);
  const json& status = item.contains("status") ? item["status"] : json();
  const json capacity = status.is_object() ? status.value("capacity", json()) : json();
  node.devices = devices_of(string_map(capacity, "status.capacity", node.where, problems), node.where,
                            problems);
  return node;
}

// Problems shown at once: a label missing on 10,000 nodes is one fix, not 10,000 lines to read.
constexpr size_t kShownProblems = 20;

void throw_if_any(const std::string& source, const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::vector<std::string> lines;
  for (size_t i = 0; i < problems.size() && i < kShownProblems; ++i) {
    lines.push_back(fmt::format("{}: {}", source, problems[i]));
  }
  if (problems.size() > kShownProblems) {
    lines.push_back(fmt::format("{}: and {} more problems", source, problems.size() - kShownProblems));
  }
  throw Error(join(lines, "\n"));
}

// The labels to read: the options', or the first family some node carries.
LabelFamily choose_labels(const std::vector<K8sNode>& nodes, const std::string& source,
                          const ImportOptions& options) {
  const auto carried = [&](const std::string& key) {
    return std::any_of(nodes.begin(), nodes.end(), [&](const K8sNode& n) { return n.labels.contains(key); });
  };
  if (!options.rack_label.empty()) return {"--rack-label", options.rack_label, options.tier_labels};
  std::vector<std::string> tried;
  for (const LabelFamily& family : label_families()) {
    tried.push_back(family.rack);
    if (!carried(family.rack)) continue;
    LabelFamily chosen = family;
    if (!options.tier_labels.empty()) {
      chosen.tiers = options.tier_labels;
    } else {
      std::erase_if(chosen.tiers, [&](const std::string& key) { return !carried(key); });
    }
    return chosen;
  }
  throw Error(fmt::format("{}: no node carries a rack label plumb knows ({}); name yours with "
                          "--rack-label KEY",
                          source, join(tried, ", ")));
}

// One tier of switches named by a label's values, in order of first appearance.
struct Level {
  std::string key;
  std::map<std::string, size_t> index;  // value -> switch index in the site
};

size_t switch_for(SiteTopology& site, Level& level, const std::string& value) {
  auto [it, inserted] = level.index.emplace(value, site.switches.size());
  if (inserted) site.switches.push_back({value, {}, {}, 0, fmt::format("{}={}", level.key, value)});
  return it->second;
}

}  // namespace

std::vector<K8sNode> parse_k8s_nodes(std::string_view text, const std::string& source) {
  const json root = parse_filtered(text, source);
  std::vector<std::string> problems;
  std::vector<K8sNode> nodes;
  const bool one_node = root.is_object() && root.contains("kind") && root["kind"].is_string() &&
                        root["kind"].get<std::string>() == "Node";
  if (one_node) {
    nodes.push_back(read_node(root, "the Node", problems));
  } else if (root.is_object() && root.contains("items") && root["items"].is_array()) {
    for (size_t i = 0; i < root["items"].size(); ++i) {
      nodes.push_back(read_node(root["items"][i], fmt::format("items[{}]", i), problems));
    }
  } else {
    problems.push_back("expected the output of kubectl get nodes -o json (an object with 'items')");
  }
  std::set<std::string> seen;
  for (const K8sNode& n : nodes) {
    if (!n.name.empty() && !seen.insert(n.name).second) {
      problems.push_back(fmt::format("{}: the node is listed twice", n.where));
    }
  }
  if (nodes.empty() && problems.empty()) problems.push_back("lists no nodes");
  throw_if_any(source, problems);
  return nodes;
}

SiteTopology site_from_k8s_nodes(const std::vector<K8sNode>& nodes, const std::string& source,
                                 const ImportOptions& options) {
  const LabelFamily labels = choose_labels(nodes, source, options);
  SiteTopology site;
  site.source = source;
  site.notes.push_back(fmt::format("racks from label {}{}{}", labels.rack,
                                   labels.tiers.empty() ? "" : ", tiers above from ",
                                   join(labels.tiers, ", ")));
  std::vector<Level> levels = {{labels.rack, {}}};
  for (const std::string& key : labels.tiers) levels.push_back({key, {}});
  std::map<size_t, std::pair<size_t, std::string>> parent;  // switch -> parent switch, node that said
  std::vector<std::string> problems;
  std::set<size_t> reported;  // switches whose second parent was reported
  for (const K8sNode& node : nodes) {
    size_t below = 0;
    for (size_t level = 0; level < levels.size(); ++level) {
      const auto value = node.labels.find(levels[level].key);
      if (value == node.labels.end() || value->second.empty()) {
        problems.push_back(fmt::format("{}: no label '{}'", node.where, levels[level].key));
        break;
      }
      const size_t s = switch_for(site, levels[level], value->second);
      if (level == 0) {
        site.switches[s].nodes.push_back(node.name);
      } else if (auto [it, inserted] = parent.emplace(below, std::make_pair(s, node.name)); inserted) {
        site.switches[s].switches.push_back(site.switches[below].name);
      } else if (it->second.first != s && reported.insert(below).second) {
        problems.push_back(fmt::format(
            "{}: {} is under {}, but node '{}' puts it under {}", node.where, site.switches[below].label,
            site.switches[s].label, it->second.second, site.switches[it->second.first].label));
      }
      below = s;
    }
    if (!node.devices.empty()) site.devices[node.name] = node.devices;
  }
  throw_if_any(source, problems);
  check_site(site);
  return site;
}

}  // namespace plumb::topo
