// A site's topology (topo/site_topology.h: Slurm topology.conf, Kubernetes labels, Volcano
// HyperNodes) and plumb's cluster map, each into the other: leaf switches are racks, the switches
// above them the map's `switches`.
#pragma once

#include "comm/cluster_map.h"
#include "topo/site_topology.h"

namespace plumb::comm {

// Racks in the site's order of its leaves, switches in the order of the rest. Devices and notes
// have no place in the map (the caller may write them as comments).
ClusterMap cluster_map_from_site(const topo::SiteTopology& site);

// The map's racks as leaf switches, its switches above them, named as the map names them.
topo::SiteTopology site_from_cluster_map(const ClusterMap& map);

}  // namespace plumb::comm
