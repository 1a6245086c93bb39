// What a PCI device is for plumb: an accelerator, a NIC (with or without RDMA), an NVMe drive, or
// something else. One table of (vendor, class) rules, first match wins (pci_class.cc, sources in
// docs/topo.md).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace plumb::topo {

enum class PciKind { kAccelerator, kRdmaNic, kNic, kNvme, kOther };

// "accelerator", "rdma-nic", "nic", "nvme", "other".
std::string_view kind_name(PciKind kind);

// Vendor ids (PCI-SIG assigned).
inline constexpr uint16_t kVendorNvidia = 0x10de;
inline constexpr uint16_t kVendorHuawei = 0x19e5;
inline constexpr uint16_t kVendorMellanox = 0x15b3;
inline constexpr uint16_t kAnyVendor = 0;  // 0 is never assigned

struct PciRule {
  uint16_t vendor_id;  // kAnyVendor matches every vendor
  uint16_t class_id;   // base class << 8 | subclass, as hwloc and lspci -n give it
  PciKind kind;
};

std::span<const PciRule> pci_rules();

// The kind of a device. A network controller (class 0x0200) with an OpenFabrics OS device
// (mlx5_0, a RoCE port) is an RDMA NIC even though its class says Ethernet.
PciKind classify_pci(uint16_t vendor_id, uint16_t class_id, bool has_openfabrics_device);

// "NVIDIA", "Mellanox", ... for the vendors plumb users meet; "" for others.
std::string_view vendor_name(uint16_t vendor_id);

}  // namespace plumb::topo
