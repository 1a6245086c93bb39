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

namespace plumb::comm {
namespace {

const std::vector<std::string> kTopKeys = {"racks", "ranks_per_node"};
const std::vector<std::string> kRackKeys = {"name", "nodes"};

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
  YAML::Node loaded;
  try {
    loaded = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    problems.add_line(e.mark.line + 1, fmt::format("not valid YAML: {}", e.msg));
    problems.throw_if_any();
  }
  const YAML::Node& root = loaded;  // const: lookups must not insert keys
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
  problems.throw_if_any();
  return map;
}

ClusterMap load_cluster_map(const std::string& path) {
  return parse_cluster_map(read_text_file(path, "cluster map"), path);
}

}  // namespace plumb::comm
