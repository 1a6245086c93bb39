#include "comm/site_map.h"

#include <fmt/format.h>

#include <set>

namespace plumb::comm {

ClusterMap cluster_map_from_site(const topo::SiteTopology& site) {
  ClusterMap map;
  map.source = site.source;
  std::set<std::string> leaves;
  for (const topo::SiteSwitch& s : site.switches) {
    if (!site.is_leaf(s)) continue;
    map.racks.push_back({s.name, s.nodes});
    leaves.insert(s.name);
  }
  for (const topo::SiteSwitch& s : site.switches) {
    if (site.is_leaf(s)) continue;
    SwitchSpec spec{s.name, {}, {}};
    for (const std::string& child : s.switches) {
      (leaves.contains(child) ? spec.racks : spec.switches).push_back(child);
    }
    map.switches.push_back(std::move(spec));
  }
  return map;
}

topo::SiteTopology site_from_cluster_map(const ClusterMap& map) {
  topo::SiteTopology site;
  site.source = map.source;
  for (const RackSpec& r : map.racks) {
    site.switches.push_back({r.name, r.nodes, {}, 0, fmt::format("rack '{}'", r.name)});
  }
  for (const SwitchSpec& s : map.switches) {
    std::vector<std::string> below = s.racks;
    below.insert(below.end(), s.switches.begin(), s.switches.end());
    site.switches.push_back({s.name, {}, below, 0, fmt::format("switch '{}'", s.name)});
  }
  return site;
}

}  // namespace plumb::comm
