// The Topology section of the HTML report for one baseline's plumb.topo/1 (topo/topo_json.h):
// its hosts as one table (a row per host: CPUs, memory, NUMA nodes, accelerators, RDMA NICs) and
// its ranks as another (a row per rank, grouped by host: local rank, accelerator and its bus id
// and NUMA node, the CPUs and NUMA nodes the rank is bound to, the RDMA NICs on its
// accelerator's NUMA node, its warning). Past kOpenRanks ranks the full rank table is collapsed
// (a <details>) under the ranks that have a warning; past kOpenHosts hosts, the hosts table too.
// Read defensively: a field missing or of another type shows as "?", never an exception.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <nlohmann/json.hpp>

namespace plumb::report {

inline constexpr size_t kOpenRanks = 64;       // more ranks: their table starts collapsed
inline constexpr size_t kOpenHosts = 32;       // more hosts: their table starts collapsed
inline constexpr size_t kMaxRankRows = 16384;  // the page lists at most this many ranks

// False, writing nothing, when `topo` is not plumb.topo/1 as topo_json writes it (hosts[] each
// with its "host", ranks[] each with its "rank" and "host", one of them not empty): the caller
// then shows it as a generic table.
bool append_topology_tables(const nlohmann::json& topo, fmt::memory_buffer& out);

}  // namespace plumb::report
