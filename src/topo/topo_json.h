// The JSON form of one host's topology, one rank's binding and one warning: the pieces of a
// plumb.topo/1 record (report/topo_reporter.h assembles the document), and what ranks send to
// rank 0. PCI ids are lower-case hex strings as lspci -n prints them ("10de"); an unknown NUMA
// node is null.
#pragma once

#include <nlohmann/json.hpp>

#include "topo/binding.h"
#include "topo/topology.h"

namespace plumb::topo {

inline constexpr const char* kTopoSchema = "plumb.topo/1";

// {"host", "source", "packages", "numa_nodes": [{"os_index", "memory_bytes", "cpus": "0-15"}],
//  "cores", "pus", "pci": [{"bus_id", "vendor_id", "device_id", "class_id", "kind", "vendor",
//  "numa_node", "os_devices": [...]}], "notes": [...]}
void to_json(nlohmann::json& j, const Topology& topo);
void from_json(const nlohmann::json& j, Topology& topo);

// {"rank", "host", "local_rank", "cpus": "0-15", "numa_nodes": [0], "accelerator": null or
//  {"index" (null when unmapped), "named_by", "bus_id", "numa_node", "problem" (null when none)}}
void to_json(nlohmann::json& j, const RankBinding& binding);
void from_json(const nlohmann::json& j, RankBinding& binding);

// {"rank", "host", "message", "fix": {"numa_node", "cpus"}}
void to_json(nlohmann::json& j, const BindingWarning& warning);
void from_json(const nlohmann::json& j, BindingWarning& warning);

}  // namespace plumb::topo
