// Where one rank runs: its host, the CPUs it may run on (sched_getaffinity), the NUMA nodes those
// CPUs belong to, the accelerator its environment names, and whether that binding is a problem:
// a rank bound across NUMA nodes, or away from its accelerator's NUMA node, is a warning that says
// which binding to use instead.
//
// Everything here but current_affinity() and accelerator_environment() is a pure function of a
// Topology, a CPU set and an environment, so the tests check it without MPI or a GPU.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topo/cpu_list.h"
#include "topo/topology.h"

namespace plumb::topo {

// NAME -> value, of the variables below.
using Environment = std::map<std::string, std::string>;

// The variables that name a process's accelerator: the launcher's LOCAL_RANK (torchrun, and
// wrappers that set it) picks an entry of CUDA_VISIBLE_DEVICES or ASCEND_RT_VISIBLE_DEVICES.
inline constexpr const char* kLocalRankVariable = "LOCAL_RANK";
inline constexpr const char* kVisibleDeviceVariables[] = {"CUDA_VISIBLE_DEVICES",
                                                          "ASCEND_RT_VISIBLE_DEVICES"};

struct AcceleratorChoice {
  int index = -1;        // accelerator number on the host (bus order); -1 when none or unmappable
  std::string named_by;  // "LOCAL_RANK=1, CUDA_VISIBLE_DEVICES=4,5,6,7"; "" when none is named
  std::string problem;   // why the named accelerator cannot be mapped to a PCI device, or ""
};

// LOCAL_RANK = n names entry n of the visible-devices list (CUDA_VISIBLE_DEVICES first), or
// accelerator n when no list is set. Without LOCAL_RANK, a list of exactly one entry names that
// one. Entries that are not indices (GPU-<uuid>, MIG-<uuid>) cannot be mapped: a problem, not a
// crash.
AcceleratorChoice choose_accelerator(const Environment& env);

// The variables choose_accelerator reads, from this process's environment.
Environment accelerator_environment();

// The os indices of the NUMA nodes holding at least one of `cpus`, ascending.
std::vector<int> numa_nodes_of(const Topology& topo, const CpuSet& cpus);

struct RankBinding {
  std::string host;
  int rank = 0;
  int local_rank = 0;  // order among the ranks on its host
  CpuSet cpus;         // empty when the affinity could not be read
  std::vector<int> numa_nodes;
  AcceleratorChoice accelerator;
  std::string accelerator_bus_id;  // "" when no accelerator is mapped
  int accelerator_numa = -1;       // -1 when unknown
};

// The record of one rank on `topo`'s host, with the named accelerator resolved to its PCI device
// (accelerator n = the n-th accelerator in bus order); an index beyond the host's accelerators
// becomes the choice's problem.
RankBinding make_binding(const Topology& topo, int rank, int local_rank, const CpuSet& cpus,
                         const Environment& env);

struct BindingWarning {
  int rank = 0;
  std::string host;
  std::string text;   // the problem and its fix, one line
  int numa_node = 0;  // the fix: bind to this NUMA node ...
  CpuSet cpus;        // ... whose CPUs are these
};

// A warning when the rank's CPUs span NUMA nodes (fix: its accelerator's node, else node
// local_rank mod the nodes with CPUs, as mpirun --map-by numa places ranks), or lie on one node
// while its accelerator hangs off another (fix: the accelerator's node). Nothing otherwise.
std::optional<BindingWarning> check_binding(const Topology& topo, const RankBinding& binding);

// This process's CPU affinity (sched_getaffinity); empty when it cannot be read.
CpuSet current_affinity();

}  // namespace plumb::topo
