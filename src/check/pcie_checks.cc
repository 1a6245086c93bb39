// The PCIe checks of plumb check node (docs/check.md): pcie.link (every accelerator's and
// NIC's negotiated link against its maximum or the site's expected width and speed) and
// host.accel_numa (each accelerator's NUMA node against the site's binding).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "check/check.h"
#include "check/findings.h"
#include "check/probe_text.h"
#include "check/sysfs_pci.h"
#include "common/error.h"

namespace plumb::check {
namespace {

// PCIe 1.0 to 6.0 run at 2.5 to 64 GT/s per lane, on x1 to x32 links (PCI-SIG base spec).
constexpr NumberRange kWidthRange{1, 32, false, true};
constexpr NumberRange kSpeedRange{2.5, 128};

// The site's expected width and speed for one class of device (accelerators or NICs).
struct LinkExpectation {
  std::optional<double> width;
  std::optional<double> speed;  // GT/s
};

LinkExpectation expectation(const CheckSection& s, const PciDevice& d) {
  const std::string prefix = d.accelerator() ? "accelerator_" : "nic_";
  return {s.number(prefix + "width", kWidthRange), s.number(prefix + "speed", kSpeedRange)};
}

std::string lspci_hint(const PciDevice& d) {
  return fmt::format("lspci -vv -s {} | grep LnkSta", d.bdf);
}

std::string speed_text(double gts) { return fmt::format("{:g} GT/s", gts); }

std::string link_value(const PciDevice& d) {
  return fmt::format("{} at x{}, {}", d.label(), d.current_width.value_or(0),
                     d.current_speed.empty() ? "speed unknown" : d.current_speed);
}

std::optional<Finding> width_finding(const PciDevice& d, const LinkExpectation& e) {
  const std::optional<int> want = e.width ? std::optional<int>(static_cast<int>(*e.width)) : d.max_width;
  if (!want || !d.current_width || *d.current_width >= *want) return std::nullopt;
  const std::string speed = e.speed ? speed_text(*e.speed) : d.max_speed;
  // nvidia-smi documents that an idle GPU "may" lower its width too (pcie.link.width.current);
  // data-centre GPUs keep x16 at idle, but the line says to confirm under load first.
  const std::string first = d.accelerator()
      ? "confirm under load (nvidia-smi -q -d PCI), then reseat the card or check the riser; "
      : "reseat the card or check the riser; ";
  return Finding{Status::kCritical, link_value(d), fmt::format("x{}, {}", *want, speed), first + lspci_hint(d)};
}

// An idle GPU lowers its link speed to save power (NVIDIA GPUs drop to 2.5 GT/s, nvidia-smi -q
// -d PCI shows "Link Gen Current" below "Max"), so an accelerator's speed is judged only against
// the site's expected value, read under load; a NIC's against its maximum as well.
std::optional<double> wanted_speed(const PciDevice& d, const LinkExpectation& e) {
  if (e.speed) return e.speed;
  if (d.accelerator()) return std::nullopt;
  return link_speed_gts(d.max_speed);
}

std::optional<Finding> speed_finding(const PciDevice& d, const LinkExpectation& e) {
  const std::optional<double> want = wanted_speed(d, e);
  const std::optional<double> have = link_speed_gts(d.current_speed);
  if (!want || !have || *have >= *want) return std::nullopt;
  const std::string width = fmt::format("x{}", e.width ? static_cast<int>(*e.width) : d.max_width.value_or(0));
  const std::string first = d.accelerator()
      ? "an idle accelerator lowers its link speed: read it under load; "
      : "check the slot's PCIe speed in the BIOS and the riser; ";
  return Finding{Status::kWarning, link_value(d), fmt::format("{}, {}", width, speed_text(*want)),
                 first + lspci_hint(d)};
}

std::vector<PciDevice> linked_devices(const NodeContext& c) {
  std::vector<PciDevice> out;
  for (PciDevice& d : read_pci_devices(c)) {
    if ((d.accelerator() || d.nic()) && d.current_width) out.push_back(std::move(d));
  }
  return out;
}

std::string device_count(const std::vector<PciDevice>& devices) {
  const auto accels = std::count_if(devices.begin(), devices.end(),
                                    [](const PciDevice& d) { return d.accelerator(); });
  const auto nics = static_cast<long>(devices.size()) - accels;
  return fmt::format("{} links at full width ({} accelerators, {} NICs)", devices.size(), accels, nics);
}

CheckResult run_link(const NodeContext& c, const CheckSection& s) {
  const std::vector<PciDevice> devices = linked_devices(c);
  if (devices.empty()) {
    return skipped("no accelerator or NIC with PCIe link attributes in /sys/bus/pci/devices");
  }
  std::vector<Finding> findings;
  for (const PciDevice& d : devices) {
    const LinkExpectation e = expectation(s, d);
    if (std::optional<Finding> f = width_finding(d, e)) findings.push_back(std::move(*f));
    else if (std::optional<Finding> g = speed_finding(d, e)) findings.push_back(std::move(*g));
  }
  const std::string note = s.has("accelerator_speed")
      ? std::string()
      : "accelerator speed not judged without accelerator_speed (idle GPUs lower it)";
  return fold_findings(std::move(findings),
                       ok(device_count(devices), "each at its maximum width", note));
}

// genconf: the narrowest width of each class and the slowest NIC speed; an accelerator's speed
// only when every one runs at its maximum (an idle GPU's lowered speed is no expectation).
template <typename Value>
void record_min(YAML::Node& out, const std::string& key, const std::vector<Value>& values) {
  if (!values.empty()) out[key] = *std::min_element(values.begin(), values.end());
}

void observe_class(YAML::Node& out, const std::vector<PciDevice>& devices, const std::string& prefix,
                   bool speed) {
  std::vector<int> widths;
  std::vector<double> speeds;
  for (const PciDevice& d : devices) {
    if (d.current_width) widths.push_back(*d.current_width);
    const std::optional<double> have = link_speed_gts(d.current_speed);
    if (have) speeds.push_back(*have);
    if (have && prefix == "accelerator_" && have != link_speed_gts(d.max_speed)) speed = false;
  }
  record_min(out, prefix + "width", widths);
  if (speed) record_min(out, prefix + "speed", speeds);
}

YAML::Node observe_link(const NodeContext& c) {
  YAML::Node out(YAML::NodeType::Map);
  const std::vector<PciDevice> devices = linked_devices(c);
  observe_class(out, accelerators_of(devices), "accelerator_", true);
  observe_class(out, nics_of(devices), "nic_", true);
  return out;
}

// host.accel_numa ------------------------------------------------------------------------------

std::map<std::string, int> expected_nodes(const CheckSection& s) {
  std::map<std::string, int> out;
  for (const auto& [bdf, node] : s.text_map("numa_nodes")) {
    const std::optional<long> n = to_long(node);
    if (!n || *n < 0 || *n > topo::kMaxCpu) {
      throw Error(fmt::format("{}: '{}' must map to a NUMA node number (0 or more), got '{}'",
                              s.at("numa_nodes"), bdf, node));
    }
    out[bdf] = static_cast<int>(*n);
  }
  return out;
}

std::optional<Finding> numa_finding(const PciDevice& d, const std::map<std::string, int>& want,
                                    size_t host_nodes) {
  const auto it = want.find(d.bdf);
  if (it != want.end() && it->second != d.numa_node) {
    return Finding{Status::kWarning, fmt::format("{} on NUMA node {}", d.label(), d.numa_node),
                   fmt::format("node {}", it->second),
                   "the device moved or the BIOS NUMA setting changed: fix the job's CPU binding "
                   "(plumb topo) or the check file"};
  }
  if (d.numa_node < 0 && host_nodes > 1) {
    return Finding{Status::kWarning,
                   fmt::format("{} on NUMA node -1 (not reported) on a {}-node host", d.label(), host_nodes),
                   "its NUMA node",
                   "the firmware does not report the device's locality (ACPI _PXM): enable it in "
                   "the BIOS; cat /sys/bus/pci/devices/" + d.bdf + "/numa_node"};
  }
  return std::nullopt;
}

std::vector<Finding> missing_devices(const std::vector<PciDevice>& accels,
                                     const std::map<std::string, int>& want) {
  std::vector<Finding> out;
  for (const auto& [bdf, node] : want) {
    // clang 14 cannot capture a structured binding: compare through a reference of its own.
    const std::string& address = bdf;
    const bool found = std::any_of(accels.begin(), accels.end(),
                                   [&](const PciDevice& d) { return d.bdf == address; });
    if (!found) {
      out.push_back({Status::kWarning, fmt::format("{} not found", bdf), fmt::format("node {}", node),
                     "lspci -s " + bdf});
    }
  }
  return out;
}

std::string nodes_summary(const std::vector<PciDevice>& accels) {
  std::map<int, int> per_node;
  for (const PciDevice& d : accels) ++per_node[d.numa_node];
  std::string text;
  for (const auto& [node, n] : per_node) text += fmt::format("{}{} ({})", text.empty() ? "" : ", ", node, n);
  return fmt::format("{} accelerators on NUMA nodes {}", accels.size(), text);
}

CheckResult run_accel_numa(const NodeContext& c, const CheckSection& s) {
  const std::vector<PciDevice> accels = accelerators_of(read_pci_devices(c));
  const std::map<std::string, int> want = expected_nodes(s);
  if (accels.empty() && want.empty()) return skipped("no accelerator in /sys/bus/pci/devices");
  const size_t host_nodes = numa_nodes(c).size();
  std::vector<Finding> findings = missing_devices(accels, want);
  for (const PciDevice& d : accels) {
    if (std::optional<Finding> f = numa_finding(d, want, host_nodes)) findings.push_back(std::move(*f));
  }
  return fold_findings(std::move(findings),
                       ok(nodes_summary(accels), want.empty() ? "" : "as the check file"));
}

YAML::Node observe_accel_numa(const NodeContext& c) {
  YAML::Node out(YAML::NodeType::Map);
  YAML::Node nodes(YAML::NodeType::Map);
  for (const PciDevice& d : accelerators_of(read_pci_devices(c))) {
    if (d.numa_node >= 0) nodes[d.bdf] = d.numa_node;
  }
  if (nodes.size() > 0) out["numa_nodes"] = nodes;
  return out;
}

}  // namespace

std::vector<CheckSpec> pcie_checks() {
  return {
      {"pcie.link",
       "every accelerator's and NIC's PCIe link width (and NIC speed) against its maximum or the "
       "expected",
       {"accelerator_width", "accelerator_speed", "nic_width", "nic_speed"}, run_link, observe_link},
      {"host.accel_numa",
       "each accelerator's NUMA node (sysfs) against the check file's binding; -1 on a multi-node "
       "host",
       {"numa_nodes"}, run_accel_numa, observe_accel_numa},
  };
}

}  // namespace plumb::check
