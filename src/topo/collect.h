// The whole plumb topo record: every host's topology, every rank's binding, the warnings. Taken
// for this process alone, or collectively over MPI where each host is probed once (by its first
// rank) and rank 0 receives everything.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "topo/binding.h"
#include "topo/topology.h"

namespace plumb::topo {

struct TopoRecord {
  std::string created;                   // ISO 8601 UTC
  std::vector<Topology> hosts;           // in the order of their first rank
  std::vector<RankBinding> ranks;        // by world rank; empty for a topology read from XML
  std::vector<BindingWarning> warnings;  // by rank
};

// `topo` and this process as rank 0 (started without a launcher). Never throws.
TopoRecord collect_local(const Topology& topo);

// Another machine's XML export: its host, no ranks. Throws plumb::Error naming the file.
TopoRecord collect_from_xml(const std::string& path);

// Collective over `comm` (every rank calls it, MPI initialised): the first rank of each host
// probes it with hwloc and shares it with the host's other ranks; each rank reads its affinity
// and accelerator variables; rank 0 gathers all. The full record on rank 0, an empty one on the
// others. Never throws (what cannot be read is a note or an empty field), so no rank is left
// waiting in a collective call.
TopoRecord collect_over_mpi(MPI_Comm comm);

}  // namespace plumb::topo
