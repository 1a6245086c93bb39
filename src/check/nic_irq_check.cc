// host.nic_irq (docs/check.md): every interrupt vector of the fabric NICs pinned to CPUs of the
// NIC's own NUMA node. The vectors are found by name in /proc/interrupts and in the device's
// msi_irqs folder; each one's CPUs are /proc/irq/<n>/smp_affinity_list.
//
// Severity: warning by default. An interrupt served on the other socket costs latency (the
// Ascend team's 320 us AllReduce had it among three causes) but the node still computes right;
// draining a fleet because irqbalance restarted would cost more than it saves. `severity:
// critical` makes it block.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "check/check.h"
#include "check/findings.h"
#include "check/network_parts.h"
#include "check/probe_text.h"
#include "check/proc_interrupts.h"
#include "check/sysfs_pci.h"
#include "common/error.h"

namespace plumb::check {
namespace {

// The fabric NICs: those the check file names, else the RDMA NICs, else every NIC.
std::vector<PciDevice> fabric_nics(const NodeContext& c, const CheckSection& s) {
  const std::vector<PciDevice> nics = nics_of(read_pci_devices(c));
  const std::vector<std::string> wanted = s.text_list("interfaces");
  std::vector<PciDevice> out;
  for (const PciDevice& d : nics) {
    const bool named = std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
      return w == d.bdf || std::count(d.net_names.begin(), d.net_names.end(), w) > 0 ||
             std::count(d.ib_names.begin(), d.ib_names.end(), w) > 0;
    });
    if (wanted.empty() ? d.kind == topo::PciKind::kRdmaNic : named) out.push_back(d);
  }
  if (wanted.empty() && out.empty()) return nics;
  return out;
}

std::set<int> vectors_of(const NodeContext& c, const PciDevice& d, const std::vector<InterruptLine>& all) {
  std::vector<std::string> names = d.net_names;
  names.insert(names.end(), d.ib_names.begin(), d.ib_names.end());
  std::set<int> irqs;
  for (const InterruptLine& line : all) {
    if (interrupt_of(line, d.bdf, names)) irqs.insert(line.irq);
  }
  for (const std::string& n : c.list(std::string(kPciDevicesDir) + "/" + d.bdf + "/msi_irqs")) {
    if (const std::optional<long> irq = to_long(n); irq && *irq >= 0 && *irq < (1L << 24)) {
      irqs.insert(static_cast<int>(*irq));
    }
  }
  return irqs;
}

std::optional<topo::CpuSet> affinity(const NodeContext& c, int irq) {
  const std::string path = fmt::format("/proc/irq/{}/smp_affinity_list", irq);
  const std::optional<std::string> text = c.read_value(path);
  if (!text) return std::nullopt;
  try {
    return topo::parse_cpu_list(*text, path);
  } catch (const Error&) {
    return std::nullopt;
  }
}

struct NicVerdict {
  size_t vectors = 0;
  std::vector<std::pair<int, topo::CpuSet>> off_node;  // IRQ and its CPUs
};

NicVerdict judge_nic(const NodeContext& c, const std::set<int>& irqs, const topo::CpuSet& local) {
  NicVerdict v;
  for (const int irq : irqs) {
    const std::optional<topo::CpuSet> cpus = affinity(c, irq);
    if (!cpus) continue;  // a vector freed since /proc/interrupts was read
    ++v.vectors;
    if (!std::includes(local.begin(), local.end(), cpus->begin(), cpus->end())) v.off_node.emplace_back(irq, *cpus);
  }
  return v;
}

Finding off_node_finding(const PciDevice& d, const NicVerdict& v, const topo::CpuSet& local, Status status) {
  const auto& [irq, cpus] = v.off_node.front();
  std::string value = fmt::format("{}: IRQ {} on CPUs {}", d.label(), irq, topo::format_cpu_list(cpus));
  if (v.off_node.size() > 1) value += fmt::format(" (and {} more of its {} vectors)", v.off_node.size() - 1, v.vectors);
  const std::string iface = d.net_names.empty() ? d.bdf : d.net_names.front();
  return Finding{status, value,
                 fmt::format("CPUs {} (NUMA node {})", topo::format_cpu_list(local), d.numa_node),
                 fmt::format("stop irqbalance and pin the NIC to its node: set_irq_affinity_bynode.sh {} {} "
                             "(MLNX_OFED), or echo {} > /proc/irq/{}/smp_affinity_list",
                             d.numa_node, iface, topo::format_cpu_list(local), irq)};
}

Status severity(const CheckSection& s) {
  const std::string level = s.text("severity").value_or("warning");
  if (level == "warning") return Status::kWarning;
  if (level == "critical") return Status::kCritical;
  throw Error(fmt::format("{}: must be warning or critical, got '{}'", s.at("severity"), level));
}

struct Tally {
  size_t nics = 0;
  size_t vectors = 0;
  std::vector<std::string> unjudged;
};

void judge_one(const NodeContext& c, const PciDevice& d, const std::vector<InterruptLine>& all,
               Status status, Tally& tally, std::vector<Finding>& findings) {
  const std::optional<topo::CpuSet> local = d.numa_node >= 0 ? numa_node_cpus(c, d.numa_node) : std::nullopt;
  const std::set<int> irqs = vectors_of(c, d, all);
  if (!local || irqs.empty()) {
    tally.unjudged.push_back(d.label());
    return;
  }
  const NicVerdict v = judge_nic(c, irqs, *local);
  ++tally.nics;
  tally.vectors += v.vectors;
  if (!v.off_node.empty()) findings.push_back(off_node_finding(d, v, *local, status));
}

CheckResult run_nic_irq(const NodeContext& c, const CheckSection& s) {
  const Status status = severity(s);
  const std::vector<PciDevice> nics = fabric_nics(c, s);
  if (nics.empty()) return skipped("no NIC in /sys/bus/pci/devices");
  if (numa_nodes(c).size() <= 1) return skipped("one NUMA node: every CPU is local to the NICs");
  const std::optional<std::string> text = c.read("/proc/interrupts");
  if (!text) return unknown("/proc/interrupts: not readable");
  const std::vector<InterruptLine> all = parse_interrupts(*text);
  Tally tally;
  std::vector<Finding> findings;
  for (const PciDevice& d : nics) judge_one(c, d, all, status, tally, findings);
  if (tally.nics == 0) {
    return unknown(fmt::format("no NUMA node or no interrupt vector found for {}", tally.unjudged.front()));
  }
  const std::string note = tally.unjudged.empty() ? "" : "not judged (no NUMA node or vectors): " + tally.unjudged.front();
  return fold_findings(std::move(findings),
                       ok(fmt::format("{} interrupts of {} NICs on their NUMA node's CPUs", tally.vectors, tally.nics),
                          "each NIC's NUMA node", note));
}

}  // namespace

CheckSpec nic_irq_check() {
  return {"host.nic_irq",
          "every interrupt of the fabric NICs (/proc/interrupts) pinned to CPUs of the NIC's NUMA node",
          {"interfaces", "severity"}, run_nic_irq, {}};
}

}  // namespace plumb::check
