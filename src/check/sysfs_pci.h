// PCI devices as sysfs shows them (/sys/bus/pci/devices/<bdf>/...), read through a NodeContext so
// that `--root DIR` and the tests' fake trees work: class and vendor (classified by
// topo/pci_class), the negotiated and maximum link width and speed, the NUMA node, and the network
// and RDMA names the kernel gave the device. Also the NUMA nodes' CPUs
// (/sys/devices/system/node/node<N>/cpulist). docs/check.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/node_context.h"
#include "topo/cpu_list.h"
#include "topo/pci_class.h"

namespace plumb::check {

inline constexpr const char* kPciDevicesDir = "/sys/bus/pci/devices";

struct PciDevice {
  std::string bdf;  // "0000:3b:00.0"
  uint16_t vendor_id = 0;
  uint16_t class_id = 0;  // base class << 8 | subclass
  topo::PciKind kind = topo::PciKind::kOther;
  std::optional<int> current_width;  // lanes; nothing when the attribute is missing or unreadable
  std::optional<int> max_width;
  std::string current_speed;  // as sysfs writes it: "16.0 GT/s PCIe" ("" when missing)
  std::string max_speed;
  int numa_node = -1;                   // -1: not reported (or a single-node host)
  std::vector<std::string> net_names;   // its network interfaces ("ens1f0np0")
  std::vector<std::string> ib_names;    // its RDMA devices ("mlx5_0")

  bool accelerator() const { return kind == topo::PciKind::kAccelerator; }
  bool nic() const { return kind == topo::PciKind::kNic || kind == topo::PciKind::kRdmaNic; }
  // "mlx5_0", else "ens1f0", else "NVIDIA GPU" / "Huawei NPU", else "PCI device".
  std::string name() const;
  // "mlx5_0 (0000:3b:00.0)"
  std::string label() const;
};

// Every PCI device under ROOT/sys/bus/pci/devices, by address; those without a readable class or
// vendor are left out.
std::vector<PciDevice> read_pci_devices(const NodeContext& context);

// The accelerators and NICs among `devices`.
std::vector<PciDevice> accelerators_of(const std::vector<PciDevice>& devices);
std::vector<PciDevice> nics_of(const std::vector<PciDevice>& devices);

// "16.0 GT/s PCIe" -> 16.0; "8 GT/s" -> 8; nothing for "Unknown" or "".
std::optional<double> link_speed_gts(std::string_view text);

// The NUMA nodes sysfs lists (/sys/devices/system/node/node<N>), ascending; empty when missing.
std::vector<int> numa_nodes(const NodeContext& context);
// The CPUs of NUMA node `node` (its cpulist), or nothing when missing or unreadable.
std::optional<topo::CpuSet> numa_node_cpus(const NodeContext& context, int node);

}  // namespace plumb::check
