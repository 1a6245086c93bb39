#include "comm/cluster_map.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"
#include "common/yaml_strict.h"
#include "topo/site_topology.h"

namespace plumb::comm {
namespace {

const std::vector<std::string> kTopKeys = {"racks", "ranks_per_node", "switches"};
const std::vector<std::string> kRackKeys = {"name", "nodes"};
const std::vector<std::string> kSwitchKeys = {"name", "racks", "switches"};

// Collects problems with their line numbers; reports them all at the end.
class Problems {
 public:
  explicit Problems(std::string_view source) : source_(source) {}

  void add(const YAML::Node& at, const std::string& what) {
    add_line(at.Mark().line + 1, what);
  }
  void add_line(int line, const std::string& what) {
    found_.emplace_back(line, line > 0 ? fmt::format("{}:{}: {}", source_, line, what)
                                       : fmt::format("{}: {}", source_, what));
  }
  bool empty() const { return found_.empty(); }
  // In file order, whatever order the checks found them in.
  void throw_if_any() {
    if (found_.empty()) return;
    std::stable_sort(found_.begin(), found_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> lines;
    for (auto& [line, text] : found_) lines.push_back(std::move(text));
    throw Error(join(lines, "\n"));
  }

 private:
  std::string source_;
  std::vector<std::pair<int, std::string>> found_;
};

// Duplicate and unknown keys of one map, each at its line.
void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, Problems& problems,
                std::string_view where) {
  for (const YamlProblem& p : key_problems(map, allowed, where)) problems.add_line(p.line, p.message);
}

// Ranks one node runs: far above any node built, low enough for an int.
constexpr NumberRange kRanksPerNode{1, 1'000'000, false, true};

void parse_ranks_per_node(const YAML::Node& root, ClusterMap& map, Problems& problems) {
  const YAML::Node value = root["ranks_per_node"];
  if (!value) return;
  std::string problem;
  if (auto v = yaml_number(value, kRanksPerNode, problem)) {
    map.ranks_per_node = static_cast<int>(*v);
  } else {
    problems.add(value, "ranks_per_node " + problem);
  }
}

struct SeenNode {
  std::string rack;
  int line;
};

void parse_rack(const YAML::Node& rack, size_t index, ClusterMap& map, Problems& problems,
                std::map<std::string, SeenNode>& seen) {
  if (!rack.IsMap()) {
    problems.add(rack, fmt::format("rack {} must be a map with 'name' and 'nodes'", index + 1));
    return;
  }
  check_keys(rack, kRackKeys, problems, "a rack");
  RackSpec spec;
  const YAML::Node name = rack["name"];
  if (!name || !name.IsScalar() || name.Scalar().empty()) {
    problems.add(rack, fmt::format("rack {} needs a 'name'", index + 1));
  } else {
    spec.name = name.Scalar();
  }
  const YAML::Node nodes = rack["nodes"];
  if (!nodes || !nodes.IsSequence() || nodes.size() == 0) {
    problems.add(nodes ? nodes : rack,
                 fmt::format("rack '{}' needs 'nodes': a non-empty list of host names",
                             spec.name.empty() ? std::to_string(index + 1) : spec.name));
  } else {
    for (const YAML::Node& node : nodes) {
      if (!node.IsScalar() || node.Scalar().empty()) {
        problems.add(node, "a node must be a host name (a string)");
        continue;
      }
      const std::string host = node.Scalar();
      const int line = node.Mark().line + 1;
      auto [it, inserted] = seen.emplace(host, SeenNode{spec.name, line});
      if (!inserted) {
        problems.add(node, fmt::format("node '{}' is listed twice (first at line {})", host,
                                       it->second.line));
        continue;
      }
      spec.nodes.push_back(host);
    }
  }
  map.racks.push_back(std::move(spec));
}

void check_rack_names(const YAML::Node& racks, const ClusterMap& map, Problems& problems) {
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < map.racks.size(); ++i) {
    const std::string& name = map.racks[i].name;
    if (name.empty()) continue;
    auto [it, inserted] = first.emplace(name, i);
    if (!inserted) {
      problems.add(racks[i], fmt::format("rack name '{}' is used twice (first at line {})", name,
                                         racks[it->second].Mark().line + 1));
    }
  }
}

// A switch's list of names below it ('racks' or 'switches'), each a non-empty string.
std::vector<std::string> name_list(const YAML::Node& sw, const char* key, const std::string& who,
                                   Problems& problems) {
  std::vector<std::string> names;
  const YAML::Node list = sw[key];
  if (!list) return names;
  if (!list.IsSequence()) {
    problems.add(list, fmt::format("{}: '{}' must be a list of names", who, key));
    return names;
  }
  for (const YAML::Node& item : list) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      problems.add(item, fmt::format("{}: '{}' must be a list of names", who, key));
    } else {
      names.push_back(item.Scalar());
    }
  }
  return names;
}

void parse_switch(const YAML::Node& sw, size_t index, ClusterMap& map, Problems& problems,
                  std::vector<int>& lines) {
  if (!sw.IsMap()) {
    problems.add(sw, fmt::format("switch {} must be a map with 'name' and 'racks' or 'switches'", index + 1));
    return;
  }
  check_keys(sw, kSwitchKeys, problems, "a switch");
  SwitchSpec spec;
  const YAML::Node name = sw["name"];
  if (!name || !name.IsScalar() || name.Scalar().empty()) {
    problems.add(sw, fmt::format("switch {} needs a 'name'", index + 1));
    return;
  }
  spec.name = name.Scalar();
  const std::string who = fmt::format("switch '{}'", spec.name);
  spec.racks = name_list(sw, "racks", who, problems);
  spec.switches = name_list(sw, "switches", who, problems);
  if (spec.racks.empty() && spec.switches.empty()) {
    problems.add(sw, who + " needs 'racks' or 'switches': the names directly below it");
  }
  map.switches.push_back(std::move(spec));
  lines.push_back(yaml_line(sw));
}

// Names below each switch exist and are of the kind listed; no name is both a rack and a switch;
// then, through the site check, no cycle and no name listed twice.
void check_switches(const ClusterMap& map, const std::vector<int>& lines, Problems& problems) {
  std::map<std::string, size_t> racks;
  for (size_t i = 0; i < map.racks.size(); ++i) racks.emplace(map.racks[i].name, i);
  std::map<std::string, size_t> switches;
  for (size_t i = 0; i < map.switches.size(); ++i) {
    const SwitchSpec& s = map.switches[i];
    if (racks.contains(s.name)) {
      problems.add_line(lines[i], fmt::format("switch '{}': the name is also a rack's", s.name));
    } else if (auto [it, inserted] = switches.emplace(s.name, i); !inserted) {
      problems.add_line(lines[i], fmt::format("switch name '{}' is used twice (first at line {})",
                                              s.name, lines[it->second]));
    }
  }
  for (size_t i = 0; i < map.switches.size(); ++i) {
    const SwitchSpec& s = map.switches[i];
    for (const std::string& r : s.racks) {
      if (!racks.contains(r)) problems.add_line(lines[i], fmt::format("switch '{}': rack '{}' is not defined", s.name, r));
    }
    for (const std::string& c : s.switches) {
      if (!switches.contains(c)) problems.add_line(lines[i], fmt::format("switch '{}': switch '{}' is not defined", s.name, c));
    }
  }
}

void check_switch_graph(const ClusterMap& map, const std::vector<int>& lines, Problems& problems) {
  topo::SiteTopology site;
  for (const RackSpec& r : map.racks) site.switches.push_back({r.name, r.nodes, {}, 0, fmt::format("rack '{}'", r.name)});
  for (size_t i = 0; i < map.switches.size(); ++i) {
    const SwitchSpec& s = map.switches[i];
    std::vector<std::string> below = s.racks;
    below.insert(below.end(), s.switches.begin(), s.switches.end());
    site.switches.push_back({s.name, {}, below, lines[i], fmt::format("switch '{}'", s.name)});
  }
  for (const topo::SiteProblem& p : topo::site_problems(site)) problems.add_line(p.line, p.message);
}

void parse_switches(const YAML::Node& root, ClusterMap& map, Problems& problems) {
  const YAML::Node switches = root["switches"];
  if (!switches) return;
  if (!switches.IsSequence()) {
    problems.add(switches, "'switches' must be a list of switches");
    return;
  }
  std::vector<int> lines;
  for (size_t i = 0; i < switches.size(); ++i) parse_switch(switches[i], i, map, problems, lines);
  if (!problems.empty()) return;  // the names below are checked once every switch reads well
  check_switches(map, lines, problems);
  if (problems.empty()) check_switch_graph(map, lines, problems);
}

}  // namespace

size_t ClusterMap::node_count() const {
  size_t count = 0;
  for (const RackSpec& r : racks) count += r.nodes.size();
  return count;
}

ClusterMap parse_cluster_map(std::string_view text, std::string_view source) {
  ClusterMap map;
  map.source = source;
  Problems problems(source);
  const YAML::Node root = load_yaml(text, source);  // const: lookups must not insert keys
  if (!root.IsMap()) {
    problems.add_line(root.IsNull() ? 0 : root.Mark().line + 1,
                      "expected a map with a 'racks' list (see docs/comm.md, \"Cluster map\")");
    problems.throw_if_any();
  }
  check_keys(root, kTopKeys, problems, "the cluster map");
  parse_ranks_per_node(root, map, problems);
  const YAML::Node racks = root["racks"];
  if (!racks || !racks.IsSequence() || racks.size() == 0) {
    problems.add(racks ? racks : root, "expected 'racks': a non-empty list of racks");
  } else {
    std::map<std::string, SeenNode> seen;
    for (size_t i = 0; i < racks.size(); ++i) parse_rack(racks[i], i, map, problems, seen);
    check_rack_names(racks, map, problems);
  }
  if (problems.empty()) parse_switches(root, map, problems);
  problems.throw_if_any();
  return map;
}

ClusterMap load_cluster_map(const std::string& path) {
  return parse_cluster_map(read_text_file(path, "cluster map"), path);
}

std::string format_cluster_map(const ClusterMap& map, std::span<const std::string> comments) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  if (map.ranks_per_node > 0) e << YAML::Key << "ranks_per_node" << YAML::Value << map.ranks_per_node;
  e << YAML::Key << "racks" << YAML::Value << YAML::BeginSeq;
  for (const RackSpec& r : map.racks) {
    e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << r.name;
    e << YAML::Key << "nodes" << YAML::Value << YAML::Flow << r.nodes << YAML::EndMap;
  }
  e << YAML::EndSeq;
  if (!map.switches.empty()) {
    e << YAML::Key << "switches" << YAML::Value << YAML::BeginSeq;
    for (const SwitchSpec& s : map.switches) {
      e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << s.name;
      if (!s.racks.empty()) e << YAML::Key << "racks" << YAML::Value << YAML::Flow << s.racks;
      if (!s.switches.empty()) e << YAML::Key << "switches" << YAML::Value << YAML::Flow << s.switches;
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  e << YAML::EndMap;
  std::string out;
  for (std::string c : comments) {
    std::replace(c.begin(), c.end(), '\n', ' ');  // a comment stays one line
    out += "# " + c + "\n";
  }
  return out + e.c_str() + "\n";
}

}  // namespace plumb::comm
