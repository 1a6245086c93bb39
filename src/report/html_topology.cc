#include "report/html_topology.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "common/units.h"
#include "report/html_out.h"

namespace plumb::report {
namespace {

using nlohmann::json;

constexpr std::string_view kRdmaNic = "rdma-nic";        // topo::kind_name(PciKind::kRdmaNic)
constexpr std::string_view kAccelerator = "accelerator";  // topo::kind_name(PciKind::kAccelerator)
constexpr int kRankColumns = 10;

// ---- Defensive reads: a missing field or one of another type is "?" / -1 / empty -------------

const json& field(const json& j, std::string_view key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string text(const json& j, std::string_view key) {
  const json& v = field(j, key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return "?";
}

int64_t integer(const json& j, std::string_view key, int64_t fallback = -1) {
  const json& v = field(j, key);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

const json& array(const json& j, std::string_view key) {
  static const json kEmpty = json::array();
  const json& v = field(j, key);
  return v.is_array() ? v : kEmpty;
}

std::string numa_text(int64_t node) { return node < 0 ? "?" : std::to_string(node); }

// "ib0/mlx5_0": the NIC's OS names (its netdev, then its verbs device); its bus id without any.
std::string nic_name(const json& nic) {
  std::vector<std::string> names;
  for (const json& n : array(nic, "os_devices")) {
    if (n.is_string()) names.push_back(n.get<std::string>());
  }
  return names.empty() ? text(nic, "bus_id") : join(names, "/");
}

// ---- The document, indexed ---------------------------------------------------------------------

struct Rank {
  const json* doc = nullptr;
  int64_t rank = -1;
  std::string host;
  std::vector<std::string> warnings;
};

struct Topo {
  std::vector<std::string> host_order;            // hosts[] order, then hosts only ranks name
  std::map<std::string, const json*> hosts;       // name -> hosts[] entry
  std::map<std::string, std::vector<Rank>> ranks;  // host -> its ranks, by rank
  size_t rank_count = 0;
  size_t flagged = 0;  // ranks with a warning
};

void add_host_name(Topo& t, const std::string& name) {
  if (std::find(t.host_order.begin(), t.host_order.end(), name) == t.host_order.end()) {
    t.host_order.push_back(name);
  }
}

std::map<int64_t, std::vector<std::string>> warnings_by_rank(const json& topo) {
  std::map<int64_t, std::vector<std::string>> out;
  for (const json& w : array(topo, "warnings")) {
    const int64_t rank = integer(w, "rank");
    if (rank >= 0 && field(w, "message").is_string()) out[rank].push_back(text(w, "message"));
  }
  return out;
}

Topo index(const json& topo) {
  Topo t;
  for (const json& h : array(topo, "hosts")) {
    const std::string name = text(h, "host");
    t.hosts.emplace(name, &h);
    add_host_name(t, name);
  }
  auto warnings = warnings_by_rank(topo);
  for (const json& r : array(topo, "ranks")) {
    Rank rank{&r, integer(r, "rank"), text(r, "host"), std::move(warnings[integer(r, "rank")])};
    const json& accelerator = field(r, "accelerator");
    if (field(accelerator, "problem").is_string()) {
      rank.warnings.push_back(text(accelerator, "problem"));
    }
    t.flagged += rank.warnings.empty() ? 0 : 1;
    add_host_name(t, rank.host);
    t.ranks[rank.host].push_back(std::move(rank));
    ++t.rank_count;
  }
  for (auto& [host, ranks] : t.ranks) {
    std::stable_sort(ranks.begin(), ranks.end(),
                     [](const Rank& a, const Rank& b) { return a.rank < b.rank; });
  }
  return t;
}

const json* host_of(const Topo& t, const std::string& name) {
  const auto it = t.hosts.find(name);
  return it == t.hosts.end() ? nullptr : it->second;
}

// ---- Hosts -------------------------------------------------------------------------------------

std::string rank_span(const std::vector<Rank>& ranks) {
  if (ranks.empty()) return "0";
  const int64_t lo = ranks.front().rank;
  const int64_t hi = ranks.back().rank;
  return lo == hi ? fmt::format("1 (rank {})", lo)
                  : fmt::format("{} (ranks {}–{})", ranks.size(), lo, hi);
}

void append_numa_cell(const json& host, fmt::memory_buffer& out) {
  put(out, "<td>");
  bool first = true;
  for (const json& n : array(host, "numa_nodes")) {
    put(out, first ? "" : "<br>");
    first = false;
    put(out, "node ");
    put_escaped(out, text(n, "os_index"));
    put(out, ": cpus ");
    put_escaped(out, text(n, "cpus"));
  }
  put(out, first ? "?</td>" : "</td>");
}

// "8 × NVIDIA 10de:2330", one line per model.
void append_accelerators_cell(const json& host, fmt::memory_buffer& out) {
  std::vector<std::pair<std::string, int>> models;
  for (const json& d : array(host, "pci")) {
    if (text(d, "kind") != kAccelerator) continue;
    const std::string model =
        fmt::format("{} {}:{}", text(d, "vendor"), text(d, "vendor_id"), text(d, "device_id"));
    auto it = std::find_if(models.begin(), models.end(),
                           [&](const auto& m) { return m.first == model; });
    if (it == models.end()) {
      models.emplace_back(model, 1);
    } else {
      ++it->second;
    }
  }
  put(out, "<td>");
  for (size_t i = 0; i < models.size(); ++i) {
    putf(out, "{}{} × ", i == 0 ? "" : "<br>", models[i].second);
    put_escaped(out, models[i].first);
  }
  put(out, models.empty() ? "none</td>" : "</td>");
}

// "mlx5_0 · NUMA 0", one line per RDMA NIC.
void append_nics_cell(const json& host, fmt::memory_buffer& out) {
  put(out, "<td>");
  bool first = true;
  for (const json& d : array(host, "pci")) {
    if (text(d, "kind") != kRdmaNic) continue;
    put(out, first ? "" : "<br>");
    first = false;
    put_escaped(out, nic_name(d));
    putf(out, " · NUMA {}", numa_text(integer(d, "numa_node")));
  }
  put(out, first ? "none</td>" : "</td>");
}

uint64_t memory_of(const json& host) {
  uint64_t total = 0;
  for (const json& n : array(host, "numa_nodes")) {
    const json& m = field(n, "memory_bytes");
    if (m.is_number_unsigned() || m.is_number_integer()) total += m.get<uint64_t>();
  }
  return total;
}

void append_host_row(const Topo& t, const std::string& name, fmt::memory_buffer& out) {
  const json* host = host_of(t, name);
  const auto ranks = t.ranks.find(name);
  put(out, "<tr><th>");
  put_escaped(out, name);
  putf(out, "</th><td class=\"num\">{}</td>",
       ranks == t.ranks.end() ? "0" : rank_span(ranks->second));
  if (host == nullptr) {
    put(out,
        "<td colspan=\"5\" class=\"absent\">not probed (no plumb topo of this host)</td></tr>");
    return;
  }
  putf(out, "<td>{} package{} · {} cores / {} PUs</td><td class=\"num\">{}</td>",
       text(*host, "packages"), integer(*host, "packages") == 1 ? "" : "s", text(*host, "cores"),
       text(*host, "pus"), format_bytes(memory_of(*host)));
  append_numa_cell(*host, out);
  append_accelerators_cell(*host, out);
  append_nics_cell(*host, out);
  put(out, "</tr>");
}

void append_hosts(const Topo& t, fmt::memory_buffer& out) {
  const bool collapsed = t.host_order.size() > kOpenHosts;
  if (collapsed) {
    putf(out, "<details class=\"topo-hosts\"><summary>{} hosts: CPUs, memory, NUMA nodes, "
              "accelerators, RDMA NICs</summary>",
         t.host_order.size());
  } else {
    put(out, "<h4>Hosts</h4>");
  }
  put(out,
      "<table class=\"rows topo-hosts\"><tr><th>host</th><th>ranks</th><th>CPUs</th>"
      "<th>memory</th><th>NUMA nodes</th><th>accelerators</th><th>RDMA NICs</th></tr>");
  for (const std::string& name : t.host_order) append_host_row(t, name, out);
  put(out, collapsed ? "</table></details>" : "</table>");
}

// ---- Ranks -------------------------------------------------------------------------------------

// The RDMA NICs on NUMA node `numa` of `host`: the ones the rank's accelerator should use.
std::string nics_near(const json* host, int64_t numa) {
  if (host == nullptr || numa < 0) return "?";
  std::vector<std::string> names;
  for (const json& d : array(*host, "pci")) {
    if (text(d, "kind") == kRdmaNic && integer(d, "numa_node") == numa) {
      names.push_back(nic_name(d));
    }
  }
  return names.empty() ? "none" : join(names, ", ");
}

std::string bound_numa(const json& rank) {
  std::vector<std::string> nodes;
  for (const json& n : array(rank, "numa_nodes")) {
    if (n.is_number_integer()) nodes.push_back(std::to_string(n.get<int64_t>()));
  }
  return nodes.empty() ? "?" : join(nodes, ",");
}

void append_rank_row(const Topo& t, const Rank& r, fmt::memory_buffer& out) {
  const json& doc = *r.doc;
  const json& acc = field(doc, "accelerator");
  const int64_t index = integer(acc, "index");
  const int64_t numa = integer(acc, "numa_node");
  putf(out, "<tr{}><td class=\"num\">{}</td><td>", r.warnings.empty() ? "" : " class=\"warn\"",
       r.rank);
  put_escaped(out, r.host);
  putf(out, "</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>", text(doc, "local_rank"),
       index < 0 ? "?" : std::to_string(index));
  put_escaped(out, field(acc, "bus_id").is_string() ? text(acc, "bus_id") : "?");
  putf(out, "</td><td class=\"num\">{}</td><td>", numa_text(numa));
  put_escaped(out, text(doc, "cpus"));
  putf(out, "</td><td class=\"num\">{}</td><td>", bound_numa(doc));
  put_escaped(out, nics_near(host_of(t, r.host), numa));
  put(out, "</td><td>");
  put_escaped(out, join(r.warnings, " · "));
  put(out, "</td></tr>");
}

constexpr std::string_view kRankHeader =
    "<tr><th>rank</th><th>host</th><th>local rank</th><th>accelerator</th><th>bus id</th>"
    "<th>its NUMA node</th><th>bound to CPUs</th><th>bound to NUMA</th>"
    "<th>RDMA NICs on its NUMA node</th><th>warning</th></tr>";

// Every rank, grouped by host (a heading row per host when there are several), at most
// kMaxRankRows; `only_flagged`: those with a warning.
void append_rank_table(const Topo& t, bool only_flagged, fmt::memory_buffer& out) {
  putf(out, "<table class=\"rows topo-ranks{}\">", only_flagged ? " flagged" : "");
  put(out, kRankHeader);
  size_t shown = 0;
  size_t total = 0;
  for (const std::string& host : t.host_order) {
    const auto it = t.ranks.find(host);
    if (it == t.ranks.end()) continue;
    bool headed = only_flagged || t.ranks.size() == 1;
    for (const Rank& r : it->second) {
      if (only_flagged && r.warnings.empty()) continue;
      ++total;
      if (shown == kMaxRankRows) continue;
      if (!headed) {
        putf(out, "<tr class=\"host\"><th colspan=\"{}\">", kRankColumns);
        put_escaped(out, host);
        putf(out, " · {}</th></tr>", rank_span(it->second));
        headed = true;
      }
      append_rank_row(t, r, out);
      ++shown;
    }
  }
  put(out, "</table>");
  if (total > shown) {
    putf(out, "<p class=\"note\">… and {} more ranks (plumb export has them all)</p>",
         total - shown);
  }
}

void append_ranks(const Topo& t, fmt::memory_buffer& out) {
  if (t.rank_count == 0) {
    put(out, "<p class=\"note\">No ranks: a topology read from a file (plumb topo --xml).</p>");
    return;
  }
  if (t.rank_count <= kOpenRanks) {
    put(out, "<h4>Ranks</h4>");
    append_rank_table(t, false, out);
    return;
  }
  if (t.flagged > 0) {
    putf(out, "<h4>Ranks with a warning ({} of {})</h4>", t.flagged, t.rank_count);
    append_rank_table(t, true, out);
  }
  putf(out, "<details class=\"topo-ranks\"><summary>All {} ranks, by host</summary>",
       t.rank_count);
  append_rank_table(t, false, out);
  put(out, "</details>");
}

// plumb.topo/1 as topo_json writes it: every host names itself ("host"), every rank has its
// number ("rank"), and there is at least one of either.
bool is_topo_record(const json& topo) {
  const json& hosts = array(topo, "hosts");
  const json& ranks = array(topo, "ranks");
  if (hosts.empty() && ranks.empty()) return false;
  for (const json& h : hosts) {
    if (!field(h, "host").is_string()) return false;
  }
  for (const json& r : ranks) {
    if (!field(r, "rank").is_number_integer() || !field(r, "host").is_string()) return false;
  }
  return true;
}

}  // namespace

bool append_topology_tables(const json& topo, fmt::memory_buffer& out) {
  if (!is_topo_record(topo)) return false;
  const Topo t = index(topo);
  putf(out, "<p class=\"note topo-count\">{} rank{} on {} host{} · {} with a warning.</p>",
       t.rank_count, t.rank_count == 1 ? "" : "s", t.host_order.size(),
       t.host_order.size() == 1 ? "" : "s", t.flagged);
  append_hosts(t, out);
  append_ranks(t, out);
  return true;
}

}  // namespace plumb::report
