#include "report/topo_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/strings.h"
#include "common/units.h"
#include "topo/topo_json.h"

namespace plumb::report {
namespace {

using topo::PciDevice;
using topo::PciKind;
using topo::Topology;

constexpr PciKind kKindOrder[] = {PciKind::kAccelerator, PciKind::kRdmaNic, PciKind::kNic,
                                  PciKind::kNvme, PciKind::kOther};

std::string plural(int n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

uint64_t total_memory(const Topology& t) {
  uint64_t total = 0;
  for (const topo::NumaNode& n : t.numa_nodes) total += n.memory_bytes;
  return total;
}

void print_host_line(const Topology& t, std::ostream& out) {
  fmt::print(out, "# plumb topo · {} · {} · {} · {} cores / {} PUs · {} memory{}\n", t.host,
             plural(t.packages, "package"),
             plural(static_cast<int>(t.numa_nodes.size()), "NUMA node"), t.cores, t.pus,
             format_bytes(total_memory(t)), t.source == "hwloc" ? "" : " (from " + t.source + ")");
  for (const std::string& note : t.notes) fmt::print(out, "# note: {}\n", note);
}

// "accelerator 3" for the n-th accelerator in bus order (the number CUDA_VISIBLE_DEVICES and the
// ranks table use), else the kind.
std::string device_label(const Topology& t, const PciDevice& d) {
  if (d.kind != PciKind::kAccelerator) return std::string(topo::kind_name(d.kind));
  const std::vector<const PciDevice*> accelerators = t.accelerators();
  for (size_t i = 0; i < accelerators.size(); ++i) {
    if (accelerators[i] == &d) return fmt::format("accelerator {}", i);
  }
  return "accelerator";
}

// Column widths of one host's device lines, so that its NUMA nodes line up.
struct Widths {
  size_t label = 0;
  size_t vendor = 0;
};

Widths widths_of(const Topology& t) {
  Widths w;
  for (const PciDevice& d : t.pci) {
    w.label = std::max(w.label, device_label(t, d).size());
    w.vendor = std::max(w.vendor, std::max<size_t>(d.vendor.size(), 1));
  }
  return w;
}

std::string trimmed(std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// The devices hanging off NUMA node `numa` (-1: those whose locality is not one node), by kind.
void print_devices(const Topology& t, int numa, const Widths& w, std::ostream& out) {
  for (PciKind kind : kKindOrder) {
    for (const PciDevice& d : t.pci) {
      if (d.numa_node != numa || d.kind != kind) continue;
      fmt::print(out, "{}\n",
                 trimmed(fmt::format("  {:<{}}  {}  {:04x}:{:04x}  {:<{}}  {}", device_label(t, d),
                                     w.label, d.bus_id, d.vendor_id, d.device_id,
                                     d.vendor.empty() ? "-" : d.vendor, w.vendor,
                                     join(d.os_devices, " "))));
    }
  }
}

void print_host(const Topology& t, std::ostream& out) {
  print_host_line(t, out);
  const Widths w = widths_of(t);
  for (const topo::NumaNode& n : t.numa_nodes) {
    fmt::print(out, "NUMA node {} · {} · cpus {}\n", n.os_index, format_bytes(n.memory_bytes),
               n.cpus.empty() ? "none" : topo::format_cpu_list(n.cpus));
    print_devices(t, n.os_index, w, out);
  }
  bool unplaced = false;
  for (const PciDevice& d : t.pci) unplaced = unplaced || d.numa_node < 0;
  if (unplaced) fmt::print(out, "no single NUMA node\n");
  print_devices(t, -1, w, out);
}

std::string accelerator_cell(const topo::RankBinding& b) {
  if (b.accelerator.index < 0) return b.accelerator.problem.empty() ? "-" : "? (see note)";
  const std::string numa = b.accelerator_numa < 0 ? "?" : std::to_string(b.accelerator_numa);
  return fmt::format("{} ({}, NUMA {})", b.accelerator.index, b.accelerator_bus_id, numa);
}

void print_ranks(const topo::TopoRecord& record, std::ostream& out) {
  if (record.ranks.empty()) {
    fmt::print(out, "#\n# ranks: none (a topology read from a file)\n");
    return;
  }
  fmt::print(out, "#\n# {}\n{:>5}  {:<16} {:>5}  {:<20} {:<6} {}\n",
             plural(static_cast<int>(record.ranks.size()), "rank"), "rank", "host", "local", "cpus",
             "NUMA", "accelerator");
  for (const topo::RankBinding& b : record.ranks) {
    std::vector<std::string> nodes;
    for (int n : b.numa_nodes) nodes.push_back(std::to_string(n));
    fmt::print(out, "{:>5}  {:<16} {:>5}  {:<20} {:<6} {}\n", b.rank, b.host, b.local_rank,
               b.cpus.empty() ? "?" : topo::format_cpu_list(b.cpus),
               nodes.empty() ? "?" : join(nodes, ","), accelerator_cell(b));
  }
  for (const topo::RankBinding& b : record.ranks) {
    if (!b.accelerator.problem.empty()) {
      fmt::print(out, "# note: rank {} ({}): {}\n", b.rank, b.accelerator.named_by,
                 b.accelerator.problem);
    }
  }
}

void print_warnings(const topo::TopoRecord& record, std::ostream& out) {
  if (record.ranks.empty()) return;
  fmt::print(out, "#\n# warnings: {}\n",
             record.warnings.empty() ? "none" : std::to_string(record.warnings.size()));
  for (const topo::BindingWarning& w : record.warnings) fmt::print(out, "warning: {}\n", w.text);
}

}  // namespace

void TopoConsoleReporter::report(const topo::TopoRecord& record, std::ostream& out) const {
  for (const Topology& t : record.hosts) print_host(t, out);
  print_ranks(record, out);
  print_warnings(record, out);
}

nlohmann::json topo_json(const topo::TopoRecord& record) {
  return {{"schema", topo::kTopoSchema},
          {"created", record.created},
          {"hosts", record.hosts},
          {"ranks", record.ranks},
          {"warnings", record.warnings}};
}

void TopoJsonReporter::report(const topo::TopoRecord& record, std::ostream& out) const {
  out << topo_json(record).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

nlohmann::json collect_topology_json(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const topo::TopoRecord record = topo::collect_over_mpi(comm);
  return rank == 0 ? topo_json(record) : nlohmann::json(nullptr);
}

}  // namespace plumb::report
