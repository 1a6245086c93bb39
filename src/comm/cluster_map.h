// The cluster map: which racks exist and which nodes (hosts) sit in each. It places ranks on
// nodes and racks, which defines the topology layers (world, node, rail, spine).
//
//   # racks -> nodes, matched against each rank's host name
//   racks:
//     - name: rack0
//       nodes: [gpu-001, gpu-002]
//     - name: rack1
//       nodes: [gpu-003, gpu-004]
//   # optional: simulate the layout on fewer hosts; rank r sits on the (r / ranks_per_node)-th
//   # node in the order listed, whatever its host
//   ranks_per_node: 2
//   # optional: the switch tiers above the racks (spines, cores), each over racks or switches
//   switches:
//     - name: spine0
//       racks: [rack0, rack1]
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::comm {

struct RackSpec {
  std::string name;
  std::vector<std::string> nodes;
};

// A switch above the racks: a spine over leaf switches (racks), a core over spines. A rack or a
// switch may sit under several (a fat tree's leaf under every spine); none may sit under itself.
struct SwitchSpec {
  std::string name;
  std::vector<std::string> racks;     // racks directly below
  std::vector<std::string> switches;  // switches directly below
};

struct ClusterMap {
  std::string source;      // file name, for messages
  int ranks_per_node = 0;  // 0: place ranks by host name
  std::vector<RackSpec> racks;
  std::vector<SwitchSpec> switches;  // empty: nothing is known above the racks

  size_t node_count() const;
};

// Parses and validates a whole map, reporting every problem at once: throws plumb::Error whose
// lines read "<source>:<line>: <problem>".
ClusterMap parse_cluster_map(std::string_view text, std::string_view source);

// Reads `path` and parses it; a file that cannot be read is an Error naming it.
ClusterMap load_cluster_map(const std::string& path);

// The map as YAML that parse_cluster_map reads back to an equal map; each of `comments` becomes a
// "# " line at the top.
std::string format_cluster_map(const ClusterMap& map, std::span<const std::string> comments = {});

}  // namespace plumb::comm
