#include "comm/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::comm {
namespace {

std::string short_host(const std::string& host) { return host.substr(0, host.find('.')); }

void number_local_ranks(Placement& p) {
  std::vector<int> next(p.nodes.size(), 0);
  for (RankPlace& r : p.ranks) r.local_rank = next[static_cast<size_t>(r.node)]++;
}

Placement nodes_from_map(const ClusterMap& map) {
  Placement p;
  for (size_t rack = 0; rack < map.racks.size(); ++rack) {
    p.racks.push_back(map.racks[rack].name);
    int position = 0;
    for (const std::string& node : map.racks[rack].nodes) {
      p.nodes.push_back({node, static_cast<int>(rack), position++});
    }
  }
  return p;
}

// A layer is a rule giving each rank a group key; ranks with equal keys form one group.
using GroupKey = std::function<std::string(const Placement&, const RankPlace&)>;

struct LayerRule {
  std::string name;
  GroupKey key;
};

const std::vector<LayerRule>& layer_rules() {
  static const std::vector<LayerRule> kRules = {
      {"world", [](const Placement&, const RankPlace&) { return std::string("world"); }},
      {"node",
       [](const Placement& p, const RankPlace& r) {
         return p.nodes[static_cast<size_t>(r.node)].name;
       }},
      {"rail",  // same local rank, nodes of one rack: cross-node links inside a rack
       [](const Placement& p, const RankPlace& r) {
         const NodePlace& n = p.nodes[static_cast<size_t>(r.node)];
         return fmt::format("{}/rail{}", p.racks[static_cast<size_t>(n.rack)], r.local_rank);
       }},
      {"spine",  // same local rank and position in rack, one per rack: cross-rack links
       [](const Placement& p, const RankPlace& r) {
         const NodePlace& n = p.nodes[static_cast<size_t>(r.node)];
         return fmt::format("pos{}/rail{}", n.position, r.local_rank);
       }},
  };
  return kRules;
}

Layer build_layer(const Placement& placement, const LayerRule& rule) {
  Layer layer{rule.name, {}, {}};
  std::map<std::string, size_t> index;
  std::vector<Group> all;
  for (size_t rank = 0; rank < placement.ranks.size(); ++rank) {
    const std::string key = rule.key(placement, placement.ranks[rank]);
    auto [it, inserted] = index.emplace(key, all.size());
    if (inserted) all.push_back({key, {}});
    all[it->second].ranks.push_back(static_cast<int>(rank));
  }
  // A group of one rank loads no link -- except the world of a single-rank run, which still
  // measures what one device's collectives cost (launch latency, local copy bandwidth).
  for (Group& g : all) {
    if (g.ranks.size() >= 2 || rule.name == "world") layer.groups.push_back(std::move(g));
  }
  return layer;
}

bool same_groups(const Layer& a, const Layer& b) {
  if (a.groups.size() != b.groups.size()) return false;
  for (size_t i = 0; i < a.groups.size(); ++i) {
    if (a.groups[i].ranks != b.groups[i].ranks) return false;
  }
  return true;
}

}  // namespace

Placement place_by_map(const ClusterMap& map, std::span<const std::string> hosts) {
  Placement p = nodes_from_map(map);
  if (map.ranks_per_node > 0) {
    p.simulated = true;
    const size_t capacity = p.nodes.size() * static_cast<size_t>(map.ranks_per_node);
    if (hosts.size() > capacity) {
      throw Error(fmt::format("{}: describes {} ranks ({} nodes × ranks_per_node {}) but {} ranks "
                              "are running",
                              map.source, capacity, p.nodes.size(), map.ranks_per_node,
                              hosts.size()));
    }
    for (size_t r = 0; r < hosts.size(); ++r) {
      p.ranks.push_back({hosts[r], static_cast<int>(r / static_cast<size_t>(map.ranks_per_node)), 0});
    }
  } else {
    std::map<std::string, int> by_name;
    for (size_t i = 0; i < p.nodes.size(); ++i) by_name[p.nodes[i].name] = static_cast<int>(i);
    std::vector<std::string> missing;
    for (size_t r = 0; r < hosts.size(); ++r) {
      auto it = by_name.find(hosts[r]);
      if (it == by_name.end()) it = by_name.find(short_host(hosts[r]));
      if (it == by_name.end()) {
        missing.push_back(fmt::format("rank {} on host '{}'", r, hosts[r]));
        continue;
      }
      p.ranks.push_back({hosts[r], it->second, 0});
    }
    if (!missing.empty()) {
      const size_t shown = std::min<size_t>(missing.size(), 4);
      throw Error(fmt::format("{}: {} of {} ranks run on hosts the map does not list: {}{}",
                              map.source, missing.size(), hosts.size(),
                              join(std::span(missing).first(shown), ", "),
                              missing.size() > shown ? ", ..." : ""));
    }
  }
  number_local_ranks(p);
  return p;
}

Placement place_by_host(std::span<const std::string> hosts, std::span<const int> node_ids) {
  Placement p;
  p.racks.push_back("rack0");
  std::map<int, int> node_of_id;
  for (size_t r = 0; r < hosts.size(); ++r) {
    auto [it, inserted] = node_of_id.emplace(node_ids[r], static_cast<int>(p.nodes.size()));
    if (inserted) {
      p.nodes.push_back({hosts[r], 0, static_cast<int>(p.nodes.size())});
    }
    p.ranks.push_back({hosts[r], it->second, 0});
  }
  number_local_ranks(p);
  return p;
}

std::span<const std::string> layer_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const LayerRule& rule : layer_rules()) names.push_back(rule.name);
    return names;
  }();
  return kNames;
}

std::vector<Layer> make_layers(const Placement& placement, std::span<const std::string> names) {
  std::vector<Layer> layers;
  for (const std::string& name : names) {
    auto rule = std::find_if(layer_rules().begin(), layer_rules().end(),
                             [&](const LayerRule& r) { return r.name == name; });
    if (rule == layer_rules().end()) {
      throw Error(unknown_name("--layers", "layer", name, layer_names()));
    }
    Layer layer = build_layer(placement, *rule);
    if (layer.groups.empty()) {
      layer.skipped = "every group has a single rank";
    } else {
      for (const Layer& earlier : layers) {
        if (earlier.skipped.empty() && same_groups(earlier, layer)) {
          layer.skipped = fmt::format("same groups as layer '{}'", earlier.name);
          break;
        }
      }
    }
    layers.push_back(std::move(layer));
  }
  return layers;
}

int group_of(const Layer& layer, int rank) {
  for (size_t g = 0; g < layer.groups.size(); ++g) {
    const auto& ranks = layer.groups[g].ranks;
    if (std::binary_search(ranks.begin(), ranks.end(), rank)) return static_cast<int>(g);
  }
  return -1;
}

}  // namespace plumb::comm
