#include "topo/pci_class.h"

#include <array>
#include <utility>

namespace plumb::topo {
namespace {

// PCI class codes (base class << 8 | subclass), from the PCI-SIG "PCI Code and ID Assignment
// Specification", section 1 (base class and sub-class codes).
constexpr uint16_t kClassNvme = 0x0108;             // mass storage, non-volatile memory controller
constexpr uint16_t kClassEthernet = 0x0200;         // network, Ethernet controller
constexpr uint16_t kClassInfiniBandNet = 0x0207;    // network, InfiniBand controller
constexpr uint16_t kClassVga = 0x0300;              // display, VGA-compatible controller
constexpr uint16_t kClass3d = 0x0302;               // display, 3D controller (data-centre GPUs)
constexpr uint16_t kClassInfiniBandBus = 0x0c06;    // serial bus, InfiniBand (older HCAs)
constexpr uint16_t kClassProcessingAccel = 0x1200;  // processing accelerator (Ascend NPUs)

constexpr std::array<PciRule, 7> kRules = {{
    {kVendorNvidia, kClass3d, PciKind::kAccelerator},
    {kVendorNvidia, kClassVga, PciKind::kAccelerator},
    {kVendorHuawei, kClassProcessingAccel, PciKind::kAccelerator},
    {kAnyVendor, kClassInfiniBandNet, PciKind::kRdmaNic},
    {kAnyVendor, kClassInfiniBandBus, PciKind::kRdmaNic},
    {kAnyVendor, kClassEthernet, PciKind::kNic},
    {kAnyVendor, kClassNvme, PciKind::kNvme},
}};

constexpr std::array<std::pair<uint16_t, std::string_view>, 9> kVendors = {{
    {kVendorNvidia, "NVIDIA"},
    {kVendorHuawei, "Huawei"},
    {kVendorMellanox, "Mellanox"},
    {0x8086, "Intel"},
    {0x1022, "AMD"},
    {0x1002, "AMD/ATI"},
    {0x14e4, "Broadcom"},
    {0x144d, "Samsung"},
    {0x1af4, "Red Hat (virtio)"},
}};

}  // namespace

std::string_view kind_name(PciKind kind) {
  switch (kind) {
    case PciKind::kAccelerator: return "accelerator";
    case PciKind::kRdmaNic: return "rdma-nic";
    case PciKind::kNic: return "nic";
    case PciKind::kNvme: return "nvme";
    case PciKind::kOther: return "other";
  }
  return "other";
}

std::span<const PciRule> pci_rules() { return kRules; }

PciKind classify_pci(uint16_t vendor_id, uint16_t class_id, bool has_openfabrics_device) {
  for (const PciRule& rule : kRules) {
    if (rule.class_id != class_id) continue;
    if (rule.vendor_id != kAnyVendor && rule.vendor_id != vendor_id) continue;
    if (rule.kind == PciKind::kNic && has_openfabrics_device) return PciKind::kRdmaNic;
    return rule.kind;
  }
  return PciKind::kOther;
}

std::string_view vendor_name(uint16_t vendor_id) {
  for (const auto& [id, name] : kVendors) {
    if (id == vendor_id) return name;
  }
  return "";
}

}  // namespace plumb::topo
