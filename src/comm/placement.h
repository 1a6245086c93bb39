// Where each rank sits (host, node, rack, local rank) and the topology layers built from it.
// Pure functions of the gathered host names and the cluster map, so every rank computes the same
// answer and tests need no MPI.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/cluster_map.h"

namespace plumb::comm {

struct RankPlace {
  std::string host;       // the host the rank really runs on
  int node = 0;           // index into Placement::nodes
  int local_rank = 0;     // order among the ranks of its node
};

struct NodePlace {
  std::string name;
  int rack = 0;           // index into Placement::racks
  int position = 0;       // order inside its rack
};

struct Placement {
  std::vector<std::string> racks;
  std::vector<NodePlace> nodes;
  std::vector<RankPlace> ranks;  // index = world rank
  bool simulated = false;        // placed by ranks_per_node rather than by host name
};

// With map.ranks_per_node: rank r on the (r / ranks_per_node)-th node listed. Without: each rank
// on the node whose name is its host name (or the host name's first label). Throws plumb::Error
// when more ranks run than the map describes or a host is not in the map.
Placement place_by_map(const ClusterMap& map, std::span<const std::string> hosts);

// Without a map: one rack; a node per shared-memory domain (node_ids from
// Communicator::node_id()), named after its host.
Placement place_by_host(std::span<const std::string> hosts, std::span<const int> node_ids);

struct Group {
  std::string name;
  std::vector<int> ranks;  // world ranks, ascending
};

struct Layer {
  std::string name;
  std::vector<Group> groups;  // disjoint; groups of two ranks or more (world: any)
  std::string skipped;        // why the layer does not run; empty when it runs
};

// The layers plumb knows, in order: world, node, rail, spine.
std::span<const std::string> layer_names();

// Builds the requested layers. A layer whose groups all have one rank, or whose groups repeat an
// earlier layer's, is returned with `skipped` set. Unknown names throw plumb::Error.
std::vector<Layer> make_layers(const Placement& placement, std::span<const std::string> names);

// The group of `layers[i]` that holds `rank`, or -1.
int group_of(const Layer& layer, int rank);

}  // namespace plumb::comm
