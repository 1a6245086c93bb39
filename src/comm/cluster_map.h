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
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace plumb::comm {

struct RackSpec {
  std::string name;
  std::vector<std::string> nodes;
};

struct ClusterMap {
  std::string source;      // file name, for messages
  int ranks_per_node = 0;  // 0: place ranks by host name
  std::vector<RackSpec> racks;

  size_t node_count() const;
};

// Parses and validates a whole map, reporting every problem at once: throws plumb::Error whose
// lines read "<source>:<line>: <problem>".
ClusterMap parse_cluster_map(std::string_view text, std::string_view source);

// Reads `path` and parses it; a file that cannot be read is an Error naming it.
ClusterMap load_cluster_map(const std::string& path);

}  // namespace plumb::comm
