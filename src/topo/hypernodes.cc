// Volcano HyperNodes (topology.volcano.sh/v1alpha1, kind HyperNode; github.com/volcano-sh/apis,
// pkg/apis/topology/v1alpha1/hypernode_types.go): one object per network domain, tier 1 closest to
// the nodes, members of type Node or HyperNode chosen by a selector -- exactMatch (a name),
// regexMatch (a pattern, matched anywhere in the name as Go's regexp.MatchString does) or
// labelMatch (a label selector, Node members only).
//
//   apiVersion: topology.volcano.sh/v1alpha1
//   kind: HyperNode
//   metadata: {name: leaf01}
//   spec:
//     tier: 1
//     members:
//       - type: Node
//         selector: {exactMatch: {name: gpu001}}
//
// Read: multi-document YAML (kubectl get hypernodes -o yaml, a List, works too). Regex and label
// members need the node list (ImportOptions::nodes); without it they are refused. Written: one
// document per switch, exactMatch members, tiers from the leaves up.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "common/error.h"
#include "common/regex.h"
#include "common/strings.h"
#include "common/yaml_strict.h"
#include "topo/site_topology.h"

namespace plumb::topo {
namespace {

constexpr std::string_view kApiVersion = "topology.volcano.sh/v1alpha1";
// A HyperNode's tier: Volcano's tiers are small integers; 1000 is far above any fabric.
constexpr int kMaxTier = 1000;

struct Reader {
  const ImportOptions& options;
  SiteTopology site;
  std::vector<SiteProblem> problems;
  std::map<std::string, int> tiers;  // as the file gives them

  void add(const YAML::Node& at, std::string message) {
    problems.push_back({yaml_line(at), std::move(message)});
  }
  bool keys(const YAML::Node& map, const std::vector<std::string>& known, std::string_view where,
            const std::string& label) {
    if (!map.IsMap()) {
      add(map, fmt::format("{}: {} must be a map", label, where));
      return false;
    }
    const auto found = key_problems(map, known, where);
    for (const YamlProblem& p : found) problems.push_back({p.line, label + ": " + p.message});
    return found.empty();
  }
};

std::string scalar(const YAML::Node& node) {
  return node && node.IsScalar() ? node.Scalar() : std::string();
}

bool label_expression_matches(const YAML::Node& e, const K8sNode& n) {
  const std::string key = scalar(e["key"]);
  const std::string op = scalar(e["operator"]);
  const auto it = n.labels.find(key);
  bool in_values = false;
  if (it != n.labels.end() && e["values"] && e["values"].IsSequence()) {
    for (const YAML::Node& v : e["values"]) in_values = in_values || scalar(v) == it->second;
  }
  if (op == "In") return in_values;
  if (op == "NotIn") return !in_values;
  if (op == "Exists") return it != n.labels.end();
  return it == n.labels.end();  // DoesNotExist (checked before matching)
}

// A metav1.LabelSelector: matchLabels all equal, matchExpressions all hold.
bool label_selector_matches(const YAML::Node& selector, const K8sNode& n) {
  if (const YAML::Node labels = selector["matchLabels"]) {
    for (const auto& kv : labels) {
      const auto it = n.labels.find(kv.first.Scalar());
      if (it == n.labels.end() || it->second != scalar(kv.second)) return false;
    }
  }
  if (const YAML::Node expressions = selector["matchExpressions"]) {
    for (const YAML::Node& e : expressions) {
      if (!label_expression_matches(e, n)) return false;
    }
  }
  return true;
}

bool check_label_selector(Reader& r, const YAML::Node& selector, const std::string& label) {
  if (!r.keys(selector, {"matchLabels", "matchExpressions"}, "labelMatch", label)) return false;
  const YAML::Node labels = selector["matchLabels"];
  if (labels && !labels.IsMap()) r.add(labels, label + ": matchLabels must be a map");
  const YAML::Node expressions = selector["matchExpressions"];
  if (!expressions) return !labels || labels.IsMap();
  if (!expressions.IsSequence()) {
    r.add(expressions, label + ": matchExpressions must be a list");
    return false;
  }
  static const std::vector<std::string> kOperators = {"In", "NotIn", "Exists", "DoesNotExist"};
  for (const YAML::Node& e : expressions) {
    if (!r.keys(e, {"key", "operator", "values"}, "a match expression", label)) return false;
    const std::string op = scalar(e["operator"]);
    if (std::find(kOperators.begin(), kOperators.end(), op) == kOperators.end()) {
      r.add(e, label + ": " + unknown_name("matchExpressions", "operator", op, kOperators));
      return false;
    }
  }
  return true;
}

// The nodes of the node list a regex or label member selects, in the list's order.
void select_nodes(Reader& r, const YAML::Node& selector, const std::string& how, SiteSwitch& s) {
  if (!r.options.nodes) {
    r.add(selector, fmt::format("{}: a member selects nodes by {}; give the node list with --nodes "
                                "FILE (kubectl get nodes -o json) to resolve it",
                                s.label, how));
    return;
  }
  const YAML::Node value = selector[how];
  std::function<bool(const K8sNode&)> matches;
  if (how == "regexMatch") {
    if (!r.keys(value, {"pattern"}, "regexMatch", s.label)) return;
    try {  // Volcano matches with Go's regexp, whose syntax is RE2's
      const Regex pattern(scalar(value["pattern"]), s.label + ": regexMatch pattern");
      matches = [pattern](const K8sNode& n) { return pattern.search(n.name); };
    } catch (const Error& e) {
      r.add(value, e.what());
      return;
    }
  } else {
    if (!check_label_selector(r, value, s.label)) return;
    matches = [value](const K8sNode& n) { return label_selector_matches(value, n); };
  }
  size_t found = 0;
  for (const K8sNode& n : *r.options.nodes) {
    if (matches(n)) {
      s.nodes.push_back(n.name);
      ++found;
    }
  }
  if (found == 0) r.add(selector, fmt::format("{}: {} selects no node of the node list", s.label, how));
}

void read_member(Reader& r, const YAML::Node& member, SiteSwitch& s) {
  if (!r.keys(member, {"type", "selector"}, "a member", s.label)) return;
  const std::string type = scalar(member["type"]);
  if (type != "Node" && type != "HyperNode") {
    r.add(member, fmt::format("{}: member type must be Node or HyperNode, got '{}'", s.label, type));
    return;
  }
  const YAML::Node selector = member["selector"];
  if (!selector || !r.keys(selector, {"exactMatch", "regexMatch", "labelMatch"}, "a selector", s.label)) {
    if (!selector) r.add(member, s.label + ": a member needs a selector");
    return;
  }
  if (selector.size() != 1) {
    r.add(selector, s.label + ": a selector holds exactly one of exactMatch, regexMatch, labelMatch");
    return;
  }
  const std::string how = selector.begin()->first.Scalar();
  if (how == "exactMatch") {
    if (!r.keys(selector[how], {"name"}, "exactMatch", s.label)) return;
    const std::string name = scalar(selector[how]["name"]);
    if (name.empty()) {
      r.add(selector, s.label + ": exactMatch needs a name");
      return;
    }
    (type == "Node" ? s.nodes : s.switches).push_back(name);
  } else if (type == "HyperNode") {
    r.add(selector, fmt::format("{}: a HyperNode member is named by exactMatch, not {}", s.label, how));
  } else {
    select_nodes(r, selector, how, s);
  }
}

int read_tier(Reader& r, const YAML::Node& spec, const std::string& label) {
  std::string problem;
  const NumberRange range{1, kMaxTier, false, true};
  const YAML::Node tier = spec["tier"];
  if (!tier) {
    r.add(spec, label + ": spec.tier is required");
  } else if (auto value = yaml_number(tier, range, problem)) {
    return static_cast<int>(*value);
  } else {
    r.add(tier, fmt::format("{}: spec.tier {}", label, problem));
  }
  return 0;
}

void read_hypernode(Reader& r, const YAML::Node& object) {
  if (!r.keys(object, {"apiVersion", "kind", "metadata", "spec", "status"}, "a HyperNode", "a document")) return;
  if (scalar(object["apiVersion"]) != kApiVersion || scalar(object["kind"]) != "HyperNode") {
    r.add(object, fmt::format("expected apiVersion {} and kind HyperNode, got '{}' and '{}'", kApiVersion,
                              scalar(object["apiVersion"]), scalar(object["kind"])));
    return;
  }
  const std::string name = object["metadata"] ? scalar(object["metadata"]["name"]) : "";
  if (name.empty()) {
    r.add(object, "a HyperNode needs metadata.name");
    return;
  }
  SiteSwitch s{name, {}, {}, yaml_line(object), fmt::format("HyperNode '{}'", name)};
  const YAML::Node spec = object["spec"];
  if (!spec || !r.keys(spec, {"tier", "tierName", "members"}, "spec", s.label)) {
    if (!spec) r.add(object, s.label + ": spec is required");
    return;
  }
  r.tiers[name] = read_tier(r, spec, s.label);
  if (const YAML::Node members = spec["members"]) {
    if (!members.IsSequence()) {
      r.add(members, s.label + ": spec.members must be a list");
    } else {
      for (const YAML::Node& member : members) read_member(r, member, s);
    }
  }
  r.site.switches.push_back(std::move(s));
}

void read_document(Reader& r, const YAML::Node& doc) {
  if (doc.IsNull()) return;
  const std::string kind = doc.IsMap() ? scalar(doc["kind"]) : "";
  if (kind == "List" || kind == "HyperNodeList") {
    const YAML::Node items = doc["items"];
    if (!items || !items.IsSequence()) {
      r.add(doc, fmt::format("a {} needs 'items'", kind));
      return;
    }
    for (const YAML::Node& item : items) read_hypernode(r, item);
    return;
  }
  read_hypernode(r, doc);
}

// A parent's tier above its members', as Volcano's tree means it.
void check_tiers(Reader& r) {
  for (const SiteSwitch& s : r.site.switches) {
    for (const std::string& child : s.switches) {
      const auto it = r.tiers.find(child);
      if (it == r.tiers.end() || r.tiers[s.name] > it->second) continue;
      r.problems.push_back({s.line, fmt::format("{}: tier {} holds HyperNode '{}' of tier {}; a "
                                                "member's tier must be lower",
                                                s.label, r.tiers[s.name], child, it->second)});
    }
  }
}

void throw_numbered_problems(const std::string& source, std::vector<SiteProblem> problems) {
  std::stable_sort(problems.begin(), problems.end(),
                   [](const SiteProblem& a, const SiteProblem& b) { return a.line < b.line; });
  std::vector<std::string> lines;
  for (const SiteProblem& p : problems) lines.push_back(fmt::format("{}:{}: {}", source, p.line, p.message));
  throw Error(join(lines, "\n"));
}

// Kubernetes object names are DNS subdomains (RFC 1123): lower-case alphanumerics, '-' and '.',
// starting and ending alphanumeric, at most 253 characters.
bool is_object_name(const std::string& name) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (name.empty() || name.size() > 253 || !alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

void check_writable(const SiteTopology& site) {
  for (const auto& [child, parents] : site_parents(site)) {
    if (parents.size() > 1) {
      throw Error(fmt::format("switch '{}' is under {}: Volcano's HyperNodes form a tree, each "
                              "member under one parent",
                              child, join(parents, " and ")));
    }
  }
  for (const SiteSwitch& s : site.switches) {
    if (!is_object_name(s.name)) {
      throw Error(fmt::format("switch '{}' is not a Kubernetes object name (lower-case letters, "
                              "digits, '-' and '.', at most 253)",
                              terminal_safe(s.name)));
    }
  }
}

void emit_member(YAML::Emitter& e, const char* type, const std::string& name) {
  e << YAML::BeginMap << YAML::Key << "type" << YAML::Value << type;
  e << YAML::Key << "selector" << YAML::Value << YAML::BeginMap << YAML::Key << "exactMatch"
    << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name << YAML::EndMap
    << YAML::EndMap << YAML::EndMap;
}

std::string hypernode_document(const SiteSwitch& s, int tier) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "apiVersion" << YAML::Value << std::string(kApiVersion);
  e << YAML::Key << "kind" << YAML::Value << "HyperNode";
  e << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << s.name << YAML::EndMap;
  e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "tier" << YAML::Value << tier;
  e << YAML::Key << "members" << YAML::Value << YAML::BeginSeq;
  for (const std::string& node : s.nodes) emit_member(e, "Node", node);
  for (const std::string& child : s.switches) emit_member(e, "HyperNode", child);
  e << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  return std::string("---\n") + e.c_str() + "\n";
}

}  // namespace

SiteTopology read_hypernodes(std::string_view text, const std::string& source,
                             const ImportOptions& options) {
  const std::vector<YAML::Node> docs = load_yaml_documents(text, source);
  Reader r{options, {}, {}, {}};
  r.site.source = source;
  for (const YAML::Node& doc : docs) {
    try {
      read_document(r, doc);
    } catch (const YAML::Exception& e) {  // a scalar where a map was expected, deep inside
      r.problems.push_back({e.mark.line + 1, fmt::format("not the shape of a HyperNode: {}", e.msg)});
    }
  }
  if (!r.problems.empty()) throw_numbered_problems(source, r.problems);
  check_site(r.site);
  check_tiers(r);
  if (!r.problems.empty()) throw_numbered_problems(source, r.problems);
  const std::map<std::string, int> heights = site_tiers(r.site);
  if (std::any_of(heights.begin(), heights.end(), [&](const auto& h) { return r.tiers[h.first] != h.second; })) {
    r.site.notes.push_back("the file's tiers skip levels; plumb topo export numbers them from the "
                           "leaves up (tier 1, 2, ...)");
  }
  return r.site;
}

std::string write_hypernodes(const SiteTopology& site) {
  check_writable(site);
  const std::map<std::string, int> tiers = site_tiers(site);
  std::vector<const SiteSwitch*> order;
  for (const SiteSwitch& s : site.switches) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [&](const SiteSwitch* a, const SiteSwitch* b) {
    return tiers.at(a->name) < tiers.at(b->name);
  });
  std::string out = fmt::format("# Volcano HyperNodes written by plumb topo export\n# from {}: {}\n",
                                site.source, site_summary(site));
  for (const SiteSwitch* s : order) out += hypernode_document(*s, tiers.at(s->name));
  return out;
}

}  // namespace plumb::topo
