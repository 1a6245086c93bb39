// One host's hardware as plumb needs it: packages, NUMA nodes with their memory and CPUs, cores,
// PUs, and the PCI devices that matter to training (accelerators, NICs, NVMe) with the NUMA node
// each hangs off. Plain data, filled by hwloc from this machine or from an XML export of another
// (lstopo --of xml, hwloc-gather-topology).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topo/cpu_list.h"
#include "topo/pci_class.h"

namespace plumb::topo {

struct NumaNode {
  int os_index = 0;
  uint64_t memory_bytes = 0;
  CpuSet cpus;
};

struct PciDevice {
  std::string bus_id;  // "0000:3b:00.0"
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint16_t class_id = 0;  // base class << 8 | subclass
  PciKind kind = PciKind::kOther;
  std::string vendor;  // "NVIDIA", or "" when unknown
  int numa_node = -1;  // os index; -1 when the device's locality covers several or none
  std::vector<std::string> os_devices;  // "mlx5_0", "ib0", "nvme0n1", "eth0"
};

struct Topology {
  std::string host;
  std::string source;  // "hwloc" for this machine, else the XML file read
  int packages = 0;
  std::vector<NumaNode> numa_nodes;  // by os index
  int cores = 0;
  int pus = 0;
  std::vector<PciDevice> pci;      // by bus id
  std::vector<std::string> notes;  // what could not be read (never fatal on this machine)

  // The NUMA node with this os index, or nullptr.
  const NumaNode* numa(int os_index) const;
  // Accelerators in bus order: index n is "accelerator n" (CUDA_DEVICE_ORDER=PCI_BUS_ID order).
  std::vector<const PciDevice*> accelerators() const;
};

// This machine, through hwloc. Never throws: a failure to load is a note in the result.
Topology probe_topology();

// Another machine's hwloc XML export. Throws plumb::Error naming the file when it cannot be read
// or is not an hwloc topology.
Topology load_topology_xml(const std::string& path);

}  // namespace plumb::topo
