#include "topo/site_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "common/error.h"
#include "common/strings.h"
#include "common/yaml_strict.h"

namespace plumb::topo {
namespace {

// The largest `kubectl get nodes -o json` read: a node's object is 5-20 KB (its image list is most
// of it), so 1 GiB holds 50,000 nodes; only names, labels and capacity are kept in memory.
constexpr size_t kMaxNodeListBytes = size_t{1} << 30;
// HyperNode YAML holds one object per switch: a few hundred bytes per member.
constexpr size_t kMaxHyperNodeBytes = size_t{64} << 20;

std::string at_line(int line) { return line > 0 ? fmt::format(" (line {})", line) : ""; }

// Switch name -> index of its first definition.
std::map<std::string, size_t> index_switches(const SiteTopology& site) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < site.switches.size(); ++i) index.emplace(site.switches[i].name, i);
  return index;
}

void check_shapes(const SiteTopology& site, std::vector<SiteProblem>& out) {
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < site.switches.size(); ++i) {
    const SiteSwitch& s = site.switches[i];
    auto [it, inserted] = first.emplace(s.name, i);
    if (!inserted) {
      const int first_line = site.switches[it->second].line;
      out.push_back({s.line, fmt::format("{}: '{}' is defined twice{}", s.label, s.name,
                                         first_line > 0 ? fmt::format(" (first at line {})", first_line)
                                                        : std::string())});
    }
    if (!s.nodes.empty() && !s.switches.empty()) {
      out.push_back({s.line, fmt::format("{}: holds both nodes and switches; a switch holds one "
                                         "or the other", s.label)});
    }
    if (s.nodes.empty() && s.switches.empty()) {
      out.push_back({s.line, fmt::format("{}: holds no nodes and no switches", s.label)});
    }
  }
}

void check_nodes(const SiteTopology& site, std::vector<SiteProblem>& out) {
  std::map<std::string, size_t> owner;
  for (size_t i = 0; i < site.switches.size(); ++i) {
    const SiteSwitch& s = site.switches[i];
    for (const std::string& node : s.nodes) {
      auto [it, inserted] = owner.emplace(node, i);
      if (inserted) continue;
      const SiteSwitch& other = site.switches[it->second];
      out.push_back({s.line, it->second == i
                                 ? fmt::format("{}: lists node '{}' twice", s.label, node)
                                 : fmt::format("{}: node '{}' is already under {}{}", s.label,
                                               node, other.label, at_line(other.line))});
    }
  }
}

void check_children(const SiteTopology& site, const std::map<std::string, size_t>& index,
                    std::vector<SiteProblem>& out) {
  for (const SiteSwitch& s : site.switches) {
    std::set<std::string> seen;
    for (const std::string& child : s.switches) {
      if (!seen.insert(child).second) {
        out.push_back({s.line, fmt::format("{}: lists switch '{}' twice", s.label, child)});
      } else if (!index.contains(child)) {
        out.push_back({s.line, fmt::format("{}: switch '{}' is not defined", s.label, child)});
      }
    }
  }
}

// Iterative depth-first search (a chain of a million switches must not overflow the stack): each
// edge back to a switch still on the path closes a cycle, reported at that switch.
void check_cycles(const SiteTopology& site, const std::map<std::string, size_t>& index,
                  std::vector<SiteProblem>& out) {
  enum Color { kWhite, kGrey, kBlack };
  std::vector<Color> color(site.switches.size(), kWhite);
  std::vector<std::pair<size_t, size_t>> path;  // switch, next child
  for (size_t root = 0; root < site.switches.size(); ++root) {
    if (color[root] != kWhite) continue;
    path.push_back({root, 0});
    color[root] = kGrey;
    while (!path.empty()) {
      auto& [u, next] = path.back();
      const std::vector<std::string>& children = site.switches[u].switches;
      if (next == children.size()) {
        color[u] = kBlack;
        path.pop_back();
        continue;
      }
      const auto it = index.find(children[next++]);
      if (it == index.end()) continue;
      const size_t c = it->second;
      if (color[c] == kWhite) {
        color[c] = kGrey;
        path.push_back({c, 0});
      } else if (color[c] == kGrey) {
        std::vector<std::string> names;
        auto from = std::find_if(path.begin(), path.end(), [&](const auto& p) { return p.first == c; });
        for (; from != path.end(); ++from) names.push_back(site.switches[from->first].name);
        names.push_back(site.switches[c].name);
        const SiteSwitch& s = site.switches[c];
        out.push_back({s.line, fmt::format("{}: switches form a cycle: {}", s.label,
                                           join(names, " -> "))});
      }
    }
  }
}

// The switches' tiers, children before parents (iterative, as check_cycles).
void compute_tiers(const SiteTopology& site, const std::map<std::string, size_t>& index,
                   std::vector<int>& tier) {
  std::vector<std::pair<size_t, size_t>> path;
  for (size_t root = 0; root < site.switches.size(); ++root) {
    if (tier[root] != 0) continue;
    path.push_back({root, 0});
    tier[root] = -1;  // on the path
    while (!path.empty()) {
      auto& [u, next] = path.back();
      const std::vector<std::string>& children = site.switches[u].switches;
      if (next == children.size()) {
        int highest = 0;
        for (const std::string& child : children) {
          if (auto it = index.find(child); it != index.end()) highest = std::max(highest, tier[it->second]);
        }
        tier[u] = highest + 1;
        path.pop_back();
        continue;
      }
      const auto it = index.find(children[next++]);
      if (it != index.end() && tier[it->second] == 0) {
        tier[it->second] = -1;
        path.push_back({it->second, 0});
      }
    }
  }
}

}  // namespace

size_t SiteTopology::node_count() const {
  size_t count = 0;
  for (const SiteSwitch& s : switches) count += s.nodes.size();
  return count;
}

std::vector<SiteProblem> site_problems(const SiteTopology& site) {
  std::vector<SiteProblem> out;
  if (site.switches.empty()) {
    out.push_back({0, "defines no switch"});
    return out;
  }
  const std::map<std::string, size_t> index = index_switches(site);
  check_shapes(site, out);
  check_nodes(site, out);
  check_children(site, index, out);
  check_cycles(site, index, out);
  std::stable_sort(out.begin(), out.end(), [](const SiteProblem& a, const SiteProblem& b) {
    return a.line < b.line;
  });
  return out;
}

void check_site(const SiteTopology& site) {
  const std::vector<SiteProblem> problems = site_problems(site);
  if (problems.empty()) return;
  std::vector<std::string> lines;
  for (const SiteProblem& p : problems) {
    lines.push_back(p.line > 0 ? fmt::format("{}:{}: {}", site.source, p.line, p.message)
                               : fmt::format("{}: {}", site.source, p.message));
  }
  throw Error(join(lines, "\n"));
}

std::map<std::string, int> site_tiers(const SiteTopology& site) {
  const std::map<std::string, size_t> index = index_switches(site);
  std::vector<int> tier(site.switches.size(), 0);
  compute_tiers(site, index, tier);
  std::map<std::string, int> out;
  for (size_t i = 0; i < site.switches.size(); ++i) out.emplace(site.switches[i].name, tier[i]);
  return out;
}

std::map<std::string, std::vector<std::string>> site_parents(const SiteTopology& site) {
  std::map<std::string, std::vector<std::string>> parents;
  for (const SiteSwitch& s : site.switches) {
    for (const std::string& child : s.switches) parents[child].push_back(s.name);
  }
  return parents;
}

std::string site_summary(const SiteTopology& site) {
  size_t leaves = 0;
  for (const SiteSwitch& s : site.switches) leaves += site.is_leaf(s) ? 1 : 0;
  std::string text = fmt::format("{} nodes under {} leaf switch{}", site.node_count(), leaves,
                                 leaves == 1 ? "" : "es");
  const size_t upper = site.switches.size() - leaves;
  if (upper == 0) return text;
  int top = 1;
  for (const auto& [name, tier] : site_tiers(site)) top = std::max(top, tier);
  return text + fmt::format(", {} switch{} above them (tiers 1-{})", upper, upper == 1 ? "" : "es", top);
}

std::vector<std::string> device_summary(const SiteTopology& site) {
  std::map<std::string, std::map<long long, size_t>> by_resource;
  for (const auto& [node, devices] : site.devices) {
    for (const auto& [resource, count] : devices) ++by_resource[resource][count];
  }
  std::vector<std::string> out;
  for (const auto& [resource, counts] : by_resource) {
    for (const auto& [count, nodes] : counts) {
      out.push_back(fmt::format("{}: {} on {} node{}", resource, count, nodes, nodes == 1 ? "" : "s"));
    }
  }
  return out;
}

std::span<const SiteFormat> site_formats() {
  static const std::vector<SiteFormat> kFormats = {
      {"slurm-topology", "Slurm's topology.conf, tree plugin (SwitchName= Nodes=/Switches=)",
       kMaxTextFileBytes,
       [](std::string_view text, const std::string& source, const ImportOptions&) {
         return read_slurm_topology(text, source);
       },
       write_slurm_topology},
      {"k8s-nodes", "kubectl get nodes -o json, racks and tiers from node labels", kMaxNodeListBytes,
       [](std::string_view text, const std::string& source, const ImportOptions& options) {
         return site_from_k8s_nodes(parse_k8s_nodes(text, source), source, options);
       },
       nullptr},
      {"hypernodes", "Volcano HyperNodes (topology.volcano.sh/v1alpha1), multi-document YAML",
       kMaxHyperNodeBytes, read_hypernodes, write_hypernodes},
  };
  return kFormats;
}

const SiteFormat& find_site_format(std::string_view name, std::string_view option,
                                   std::string_view direction) {
  std::vector<std::string> names;
  const SiteFormat* found = nullptr;
  for (const SiteFormat& f : site_formats()) {
    const bool goes = direction == "import" ? bool(f.read) : bool(f.write);
    if (!goes) continue;
    names.push_back(f.name);
    if (f.name == name) found = &f;
  }
  if (found) return *found;
  for (const SiteFormat& f : site_formats()) {
    if (f.name == name) {
      throw Error(fmt::format("{}: {} is an import format only; {} formats: {}", option, name,
                              direction, join(names, ", ")));
    }
  }
  throw Error(unknown_name(option, "format", name, names));
}

}  // namespace plumb::topo
