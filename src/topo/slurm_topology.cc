// Slurm's topology.conf for the topology/tree plugin (slurm.schedmd.com/topology.conf.html):
//
//   # comments run to the end of the line; a backslash at the end joins the next line to it
//   SwitchName=leaf01 Nodes=gpu[001-032] LinkSpeed=400
//   SwitchName=spine0 Switches=leaf[01-16]
//
// One switch per line; parameter names are case-insensitive; Nodes= and Switches= are hostlist
// expressions; LinkSpeed= is accepted and ignored (plumb measures links, it does not trust them).
// The topology/block plugin's BlockName= lines are refused with a clear message.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "common/error.h"
#include "common/strings.h"
#include "topo/hostlist.h"
#include "topo/site_topology.h"

namespace plumb::topo {
namespace {

struct LogicalLine {
  int line = 0;  // where it starts
  std::string text;
};

// Comments cut, backslash continuations joined (the next line's leading blanks dropped), blank
// lines dropped.
std::vector<LogicalLine> logical_lines(std::string_view text) {
  std::vector<LogicalLine> out;
  LogicalLine pending;
  bool continuing = false;
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    std::string_view line = text.substr(start, end - start);
    line = trim_blanks(line.substr(0, line.find('#')));
    const bool more = !line.empty() && line.back() == '\\';
    if (more) line.remove_suffix(1);
    if (!continuing) pending = {number, ""};
    pending.text += line;  // joined as it stands: "Nodes=a[1-2],\" then "  a5" is one list
    continuing = more;
    if (!continuing && !trim_blanks(pending.text).empty()) out.push_back(pending);
    if (end == text.size()) break;
    start = end + 1;
  }
  if (continuing && !trim_blanks(pending.text).empty()) out.push_back(pending);
  return out;
}

std::vector<std::string_view> split_blanks(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '\r')) ++at;
    size_t end = at;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != '\r') ++end;
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end;
  }
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view unquote(std::string_view value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') return value.substr(1, value.size() - 2);
  return value;
}

// The parameters of the tree plugin, by their canonical spelling.
const std::vector<std::string> kKeys = {"SwitchName", "Switches", "Nodes", "LinkSpeed"};

struct Parsed {
  SiteTopology site;
  std::vector<SiteProblem> problems;
  size_t names = 0;  // every name expanded so far, against kMaxHostlistNames
};

std::vector<std::string> expand(std::string_view key, std::string_view value, const SiteSwitch& s,
                                int line, Parsed& p) {
  try {
    std::vector<std::string> names = expand_hostlist(value);
    p.names += names.size();
    if (p.names > kMaxHostlistNames) {
      throw Error(fmt::format("the file names more than {} nodes and switches", kMaxHostlistNames));
    }
    return names;
  } catch (const Error& e) {
    p.problems.push_back({line, fmt::format("{}: {}={}: {}", s.label, key, value, e.what())});
    return {};
  }
}

// Key -> value of one line, every key known and given once; problems otherwise.
std::map<std::string, std::string_view> line_fields(const LogicalLine& l, Parsed& p) {
  std::map<std::string, std::string_view> fields;
  for (std::string_view token : split_blanks(l.text)) {
    const size_t eq = token.find('=');
    const std::string key = lower(token.substr(0, eq));
    const auto known = std::find_if(kKeys.begin(), kKeys.end(),
                                    [&](const std::string& k) { return lower(k) == key; });
    if (eq == std::string_view::npos) {
      p.problems.push_back({l.line, fmt::format("expected Name=value, got '{}'", token)});
    } else if (key == "blockname" || key == "blocksizes") {
      p.problems.push_back({l.line, fmt::format("{} belongs to the topology/block plugin; plumb reads "
                                                "the topology/tree plugin's SwitchName= lines",
                                                token.substr(0, eq + 1))});
    } else if (known == kKeys.end()) {
      const std::string_view given = token.substr(0, eq);
      p.problems.push_back({l.line, fmt::format("unknown parameter '{}'{}; expected one of {}", given,
                                                did_you_mean(given, kKeys), join(kKeys, ", "))});
    } else if (!fields.emplace(*known, unquote(token.substr(eq + 1))).second) {
      p.problems.push_back({l.line, fmt::format("{}= is given twice", *known)});
    }
  }
  return fields;
}

void read_line(const LogicalLine& l, Parsed& p) {
  const size_t before = p.problems.size();
  const auto fields = line_fields(l, p);
  if (p.problems.size() != before) return;
  const auto name = fields.find("SwitchName");
  if (name == fields.end() || name->second.empty()) {
    p.problems.push_back({l.line, "expected SwitchName=<name> on every line"});
    return;
  }
  SiteSwitch s{std::string(name->second), {}, {}, l.line, fmt::format("SwitchName={}", name->second)};
  if (terminal_safe(s.name) != s.name) {
    p.problems.push_back({l.line, fmt::format("{}: a switch name is printable UTF-8 text",
                                              terminal_safe(s.label))});
    return;
  }
  if (s.name.find_first_of("[],") != std::string::npos) {
    p.problems.push_back({l.line, fmt::format("{}: a switch name is one name, not a hostlist", s.label)});
    return;
  }
  for (const char* key : {"Nodes", "Switches"}) {
    const auto it = fields.find(key);
    if (it == fields.end()) continue;
    if (it->second.empty()) {
      p.problems.push_back({l.line, fmt::format("{}: {}= is empty", s.label, key)});
      continue;
    }
    if (it->second.find('"') != std::string_view::npos) {
      p.problems.push_back({l.line, fmt::format("{}: {}={}: a quote inside a value", s.label, key, it->second)});
      continue;
    }
    (std::string_view(key) == "Nodes" ? s.nodes : s.switches) = expand(key, it->second, s, l.line, p);
  }
  p.site.switches.push_back(std::move(s));
}

void throw_problems(const std::string& source, std::vector<SiteProblem> problems) {
  std::stable_sort(problems.begin(), problems.end(),
                   [](const SiteProblem& a, const SiteProblem& b) { return a.line < b.line; });
  std::vector<std::string> lines;
  for (const SiteProblem& pr : problems) {
    lines.push_back(pr.line > 0 ? fmt::format("{}:{}: {}", source, pr.line, pr.message)
                                : fmt::format("{}: {}", source, pr.message));
  }
  throw Error(join(lines, "\n"));
}

// A name that Slurm would read back as the same one name.
void check_switch_name(const SiteSwitch& s) {
  if (s.name.empty() || s.name.find_first_of(" \t\r\n#=\"[],\\") != std::string::npos) {
    throw Error(fmt::format("switch '{}' cannot be written in topology.conf (it is empty or holds "
                            "a blank, '#', '=', a quote, a backslash, ',', '[' or ']')",
                            terminal_safe(s.name)));
  }
}

std::string switch_line(const SiteSwitch& s) {
  check_switch_name(s);
  try {
    return s.nodes.empty() ? fmt::format("SwitchName={} Switches={}", s.name, compress_hostlist(s.switches))
                           : fmt::format("SwitchName={} Nodes={}", s.name, compress_hostlist(s.nodes));
  } catch (const Error& e) {
    throw Error(fmt::format("switch '{}': {}", terminal_safe(s.name), e.what()));
  }
}

}  // namespace

SiteTopology read_slurm_topology(std::string_view text, const std::string& source) {
  Parsed p;
  p.site.source = source;
  for (const LogicalLine& l : logical_lines(text)) {
    read_line(l, p);
    if (p.names > kMaxHostlistNames) break;
  }
  if (!p.problems.empty()) throw_problems(source, p.problems);
  check_site(p.site);
  return p.site;
}

std::string write_slurm_topology(const SiteTopology& site) {
  const std::map<std::string, int> tiers = site_tiers(site);
  std::vector<const SiteSwitch*> order;
  for (const SiteSwitch& s : site.switches) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [&](const SiteSwitch* a, const SiteSwitch* b) {
    return tiers.at(a->name) < tiers.at(b->name);
  });
  std::string out = fmt::format(
      "# topology.conf for Slurm's topology/tree plugin, written by plumb topo export\n"
      "# from {}: {}\n",
      site.source, site_summary(site));
  for (const SiteSwitch* s : order) out += switch_line(*s) + "\n";
  return out;
}

}  // namespace plumb::topo
