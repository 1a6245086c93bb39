#include "topo/topology.h"

#include <fmt/format.h>
#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/environment.h"
#include "common/error.h"

namespace plumb::topo {
namespace {

// RAII over an hwloc topology that keeps the I/O devices hwloc calls important (GPUs, NICs,
// storage, accelerators; not every bridge and USB controller).
class Hwloc {
 public:
  Hwloc() {
    hwloc_topology_init(&topology_);
    hwloc_topology_set_io_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  }
  ~Hwloc() { hwloc_topology_destroy(topology_); }
  Hwloc(const Hwloc&) = delete;
  Hwloc& operator=(const Hwloc&) = delete;
  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

CpuSet cpu_set(hwloc_const_bitmap_t bitmap) {
  CpuSet cpus;
  if (bitmap == nullptr) return cpus;
  for (int i = hwloc_bitmap_first(bitmap); i >= 0 && i <= kMaxCpu;
       i = hwloc_bitmap_next(bitmap, i)) {
    cpus.insert(cpus.end(), i);
  }
  return cpus;
}

// The NUMA node a device hangs off: its first non-I/O ancestor's, when that covers exactly one.
int numa_of(hwloc_topology_t t, hwloc_obj_t device) {
  const hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(t, device);
  if (ancestor == nullptr || ancestor->nodeset == nullptr) return -1;
  if (hwloc_bitmap_weight(ancestor->nodeset) != 1) return -1;
  return hwloc_bitmap_first(ancestor->nodeset);
}

PciDevice pci_device(hwloc_topology_t t, hwloc_obj_t obj) {
  const auto& a = obj->attr->pcidev;
  PciDevice d;
  d.bus_id = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.dev, a.func);
  d.vendor_id = a.vendor_id;
  d.device_id = a.device_id;
  d.class_id = a.class_id;
  bool openfabrics = false;
  for (hwloc_obj_t child = obj->io_first_child; child != nullptr; child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE || child->name == nullptr) continue;
    d.os_devices.emplace_back(child->name);
    openfabrics = openfabrics || child->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
  }
  d.kind = classify_pci(a.vendor_id, a.class_id, openfabrics);
  d.vendor = vendor_name(a.vendor_id);
  const char* hwloc_vendor = hwloc_obj_get_info_by_name(obj, "PCIVendor");
  if (d.vendor.empty() && hwloc_vendor != nullptr) d.vendor = hwloc_vendor;
  d.numa_node = numa_of(t, obj);
  return d;
}

int count(hwloc_topology_t t, hwloc_obj_type_t type) {
  return std::max(0, hwloc_get_nbobjs_by_type(t, type));
}

// Everything plumb keeps, from a loaded topology.
Topology read(hwloc_topology_t t) {
  Topology topo;
  topo.packages = count(t, HWLOC_OBJ_PACKAGE);
  topo.cores = count(t, HWLOC_OBJ_CORE);
  topo.pus = count(t, HWLOC_OBJ_PU);
  for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n));) {
    topo.numa_nodes.push_back(
        {static_cast<int>(n->os_index), n->attr->numanode.local_memory, cpu_set(n->cpuset)});
  }
  for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_pcidev(t, p));) {
    topo.pci.push_back(pci_device(t, p));
  }
  std::sort(topo.numa_nodes.begin(), topo.numa_nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.os_index < b.os_index; });
  std::sort(topo.pci.begin(), topo.pci.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.bus_id < b.bus_id; });
  return topo;
}

}  // namespace

const NumaNode* Topology::numa(int os_index) const {
  for (const NumaNode& n : numa_nodes) {
    if (n.os_index == os_index) return &n;
  }
  return nullptr;
}

std::vector<const PciDevice*> Topology::accelerators() const {
  std::vector<const PciDevice*> out;
  for (const PciDevice& d : pci) {
    if (d.kind == PciKind::kAccelerator) out.push_back(&d);
  }
  return out;
}

Topology probe_topology() {
  Hwloc hwloc;
  Topology topo;
  if (hwloc_topology_load(hwloc.get()) == 0) {
    topo = read(hwloc.get());
  } else {
    topo.notes.push_back(
        fmt::format("hwloc could not read this machine: {}", std::strerror(errno)));
  }
  topo.host = host_name();
  topo.source = "hwloc";
  return topo;
}

Topology load_topology_xml(const std::string& path) {
  if (!std::ifstream(path)) {
    throw Error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  Hwloc hwloc;
  if (hwloc_topology_set_xml(hwloc.get(), path.c_str()) != 0 ||
      hwloc_topology_load(hwloc.get()) != 0) {
    throw Error(
        fmt::format("{}: not an hwloc XML topology (export one with lstopo --of xml)", path));
  }
  Topology topo = read(hwloc.get());
  const char* host = hwloc_obj_get_info_by_name(hwloc_get_root_obj(hwloc.get()), "HostName");
  topo.host = host != nullptr ? host : path;
  topo.source = path;
  return topo;
}

}  // namespace plumb::topo
