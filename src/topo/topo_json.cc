#include "topo/topo_json.h"

#include <fmt/format.h>

#include <string>

namespace plumb::topo {
namespace {

using nlohmann::json;

std::string hex(uint16_t id) { return fmt::format("{:04x}", id); }

uint16_t from_hex(const json& j) {
  return static_cast<uint16_t>(std::stoul(j.get<std::string>(), nullptr, 16));
}

json optional_int(int value) { return value < 0 ? json(nullptr) : json(value); }

int int_or(const json& j, int fallback) { return j.is_null() ? fallback : j.get<int>(); }

json numa_json(const NumaNode& n) {
  return {{"os_index", n.os_index},
          {"memory_bytes", n.memory_bytes},
          {"cpus", format_cpu_list(n.cpus)}};
}

NumaNode numa_from(const json& j) {
  return {j.at("os_index").get<int>(), j.at("memory_bytes").get<uint64_t>(),
          parse_cpu_list(j.at("cpus").get<std::string>(), "numa_nodes[].cpus")};
}

json pci_json(const PciDevice& d) {
  return {{"bus_id", d.bus_id},
          {"vendor_id", hex(d.vendor_id)},
          {"device_id", hex(d.device_id)},
          {"class_id", hex(d.class_id)},
          {"kind", kind_name(d.kind)},
          {"vendor", d.vendor},
          {"numa_node", optional_int(d.numa_node)},
          {"os_devices", d.os_devices}};
}

PciKind kind_from(const std::string& name) {
  for (PciKind k : {PciKind::kAccelerator, PciKind::kRdmaNic, PciKind::kNic, PciKind::kNvme}) {
    if (kind_name(k) == name) return k;
  }
  return PciKind::kOther;
}

PciDevice pci_from(const json& j) {
  return {j.at("bus_id").get<std::string>(),
          from_hex(j.at("vendor_id")),
          from_hex(j.at("device_id")),
          from_hex(j.at("class_id")),
          kind_from(j.at("kind").get<std::string>()),
          j.at("vendor").get<std::string>(),
          int_or(j.at("numa_node"), -1),
          j.at("os_devices").get<std::vector<std::string>>()};
}

json accelerator_json(const RankBinding& b) {
  const AcceleratorChoice& a = b.accelerator;
  if (a.named_by.empty() && a.problem.empty()) return nullptr;
  return {{"index", optional_int(a.index)},
          {"named_by", a.named_by},
          {"bus_id", b.accelerator_bus_id.empty() ? json(nullptr) : json(b.accelerator_bus_id)},
          {"numa_node", optional_int(b.accelerator_numa)},
          {"problem", a.problem.empty() ? json(nullptr) : json(a.problem)}};
}

void accelerator_from(const json& j, RankBinding& b) {
  if (j.is_null()) return;
  b.accelerator.index = int_or(j.at("index"), -1);
  b.accelerator.named_by = j.at("named_by").get<std::string>();
  b.accelerator.problem = j.at("problem").is_null() ? "" : j.at("problem").get<std::string>();
  b.accelerator_bus_id = j.at("bus_id").is_null() ? "" : j.at("bus_id").get<std::string>();
  b.accelerator_numa = int_or(j.at("numa_node"), -1);
}

}  // namespace

void to_json(json& j, const Topology& topo) {
  json numa = json::array();
  for (const NumaNode& n : topo.numa_nodes) numa.push_back(numa_json(n));
  json pci = json::array();
  for (const PciDevice& d : topo.pci) pci.push_back(pci_json(d));
  j = {{"host", topo.host},  {"source", topo.source}, {"packages", topo.packages},
       {"numa_nodes", numa}, {"cores", topo.cores},   {"pus", topo.pus},
       {"pci", pci},         {"notes", topo.notes}};
}

void from_json(const json& j, Topology& topo) {
  topo.host = j.at("host").get<std::string>();
  topo.source = j.at("source").get<std::string>();
  topo.packages = j.at("packages").get<int>();
  topo.cores = j.at("cores").get<int>();
  topo.pus = j.at("pus").get<int>();
  topo.numa_nodes.clear();
  for (const json& n : j.at("numa_nodes")) topo.numa_nodes.push_back(numa_from(n));
  topo.pci.clear();
  for (const json& d : j.at("pci")) topo.pci.push_back(pci_from(d));
  topo.notes = j.at("notes").get<std::vector<std::string>>();
}

void to_json(json& j, const RankBinding& b) {
  j = {{"rank", b.rank},
       {"host", b.host},
       {"local_rank", b.local_rank},
       {"cpus", format_cpu_list(b.cpus)},
       {"numa_nodes", b.numa_nodes},
       {"accelerator", accelerator_json(b)}};
}

void from_json(const json& j, RankBinding& b) {
  b.rank = j.at("rank").get<int>();
  b.host = j.at("host").get<std::string>();
  b.local_rank = j.at("local_rank").get<int>();
  b.cpus = parse_cpu_list(j.at("cpus").get<std::string>(), "ranks[].cpus");
  b.numa_nodes = j.at("numa_nodes").get<std::vector<int>>();
  b.accelerator = {};
  b.accelerator_bus_id.clear();
  b.accelerator_numa = -1;
  accelerator_from(j.at("accelerator"), b);
}

void to_json(json& j, const BindingWarning& w) {
  j = {{"rank", w.rank},
       {"host", w.host},
       {"message", w.text},
       {"fix", {{"numa_node", w.numa_node}, {"cpus", format_cpu_list(w.cpus)}}}};
}

void from_json(const json& j, BindingWarning& w) {
  w.rank = j.at("rank").get<int>();
  w.host = j.at("host").get<std::string>();
  w.text = j.at("message").get<std::string>();
  w.numa_node = j.at("fix").at("numa_node").get<int>();
  w.cpus = parse_cpu_list(j.at("fix").at("cpus").get<std::string>(), "warnings[].fix.cpus");
}

}  // namespace plumb::topo
