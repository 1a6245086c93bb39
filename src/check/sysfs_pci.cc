#include "check/sysfs_pci.h"

#include <fmt/format.h>

#include <algorithm>

#include "check/probe_text.h"
#include "common/error.h"

namespace plumb::check {
namespace {

std::string device_path(std::string_view bdf, std::string_view attribute) {
  return fmt::format("{}/{}/{}", kPciDevicesDir, bdf, attribute);
}

std::optional<int> read_int(const NodeContext& c, const std::string& path) {
  const std::optional<std::string> text = c.read_value(path);
  if (!text) return std::nullopt;
  const std::optional<long> v = to_long(*text);
  if (!v || *v < -1 || *v > 1024) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<unsigned long> read_hex(const NodeContext& c, const std::string& path) {
  const std::optional<std::string> text = c.read_value(path);
  return text ? to_hex(*text) : std::nullopt;
}

// sysfs writes a link attribute a device does not report as a width of 0 or a speed "Unknown".
std::optional<int> read_width(const NodeContext& c, std::string_view bdf, std::string_view name) {
  const std::optional<int> w = read_int(c, device_path(bdf, name));
  if (!w || *w <= 0) return std::nullopt;
  return w;
}

void read_link(const NodeContext& c, PciDevice& d) {
  d.current_width = read_width(c, d.bdf, "current_link_width");
  d.max_width = read_width(c, d.bdf, "max_link_width");
  d.current_speed = c.read_value(device_path(d.bdf, "current_link_speed")).value_or("");
  d.max_speed = c.read_value(device_path(d.bdf, "max_link_speed")).value_or("");
}

std::optional<PciDevice> read_device(const NodeContext& c, const std::string& bdf) {
  const std::optional<unsigned long> vendor = read_hex(c, device_path(bdf, "vendor"));
  const std::optional<unsigned long> klass = read_hex(c, device_path(bdf, "class"));
  if (!vendor || !klass || *vendor > 0xffff || *klass > 0xffffff) return std::nullopt;
  PciDevice d;
  d.bdf = bdf;
  d.vendor_id = static_cast<uint16_t>(*vendor);
  d.class_id = static_cast<uint16_t>(*klass >> 8);  // drop the programming interface byte
  d.net_names = c.list(device_path(bdf, "net"));
  d.ib_names = c.list(device_path(bdf, "infiniband"));
  d.kind = topo::classify_pci(d.vendor_id, d.class_id, !d.ib_names.empty());
  d.numa_node = read_int(c, device_path(bdf, "numa_node")).value_or(-1);
  read_link(c, d);
  return d;
}

std::vector<PciDevice> filtered(const std::vector<PciDevice>& all, bool (PciDevice::*keep)() const) {
  std::vector<PciDevice> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out),
               [&](const PciDevice& d) { return (d.*keep)(); });
  return out;
}

}  // namespace

std::string PciDevice::name() const {
  if (!ib_names.empty()) return ib_names.front();
  if (!net_names.empty()) return net_names.front();
  if (accelerator()) {
    const std::string_view vendor = topo::vendor_name(vendor_id);
    return fmt::format("{} {}", vendor.empty() ? "PCI" : vendor,
                       vendor_id == topo::kVendorHuawei ? "NPU" : "GPU");
  }
  return "PCI device";
}

std::string PciDevice::label() const { return fmt::format("{} ({})", name(), bdf); }

std::vector<PciDevice> read_pci_devices(const NodeContext& context) {
  std::vector<PciDevice> devices;
  for (const std::string& bdf : context.list(kPciDevicesDir)) {
    if (std::optional<PciDevice> d = read_device(context, bdf)) devices.push_back(std::move(*d));
  }
  return devices;
}

std::vector<PciDevice> accelerators_of(const std::vector<PciDevice>& devices) {
  return filtered(devices, &PciDevice::accelerator);
}

std::vector<PciDevice> nics_of(const std::vector<PciDevice>& devices) {
  return filtered(devices, &PciDevice::nic);
}

std::optional<double> link_speed_gts(std::string_view text) {
  const std::optional<double> v = leading_number(text);
  if (!v || *v <= 0) return std::nullopt;
  return v;
}

std::vector<int> numa_nodes(const NodeContext& context) {
  std::vector<int> nodes;
  for (const std::string& name : context.list("/sys/devices/system/node")) {
    if (name.rfind("node", 0) != 0) continue;
    const std::optional<long> n = to_long(std::string_view(name).substr(4));
    if (n && *n >= 0 && *n <= topo::kMaxCpu) nodes.push_back(static_cast<int>(*n));
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

std::optional<topo::CpuSet> numa_node_cpus(const NodeContext& context, int node) {
  const std::string path = fmt::format("/sys/devices/system/node/node{}/cpulist", node);
  const std::optional<std::string> text = context.read_value(path);
  if (!text) return std::nullopt;
  try {
    return topo::parse_cpu_list(*text, path);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace plumb::check
