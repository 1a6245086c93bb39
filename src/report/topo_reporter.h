// Reporters for topo::TopoRecord: a compact lstopo-like tree per host with the ranks table and the
// warnings, and JSON (schema plumb.topo/1).
#pragma once

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <ostream>

#include "topo/collect.h"

namespace plumb::report {

class TopoReporter {
 public:
  virtual ~TopoReporter() = default;
  virtual void report(const topo::TopoRecord& record, std::ostream& out) const = 0;
};

// Per host: "# plumb topo · host · 2 packages · 2 NUMA nodes · 32 cores / 64 PUs", then per NUMA
// node its memory, CPUs and PCI devices by kind; then the ranks (rank, host, local rank, cpus,
// NUMA, accelerator) and the warnings with their fix.
class TopoConsoleReporter final : public TopoReporter {
 public:
  void report(const topo::TopoRecord& record, std::ostream& out) const override;
};

class TopoJsonReporter final : public TopoReporter {
 public:
  void report(const topo::TopoRecord& record, std::ostream& out) const override;
};

// The plumb.topo/1 document: {"schema", "created", "hosts": [...], "ranks": [...],
// "warnings": [...]}, each element as topo/topo_json.h describes it.
nlohmann::json topo_json(const topo::TopoRecord& record);

// The whole collection, for commands that run under MPI already (plumb baseline): call it on
// every rank of `comm` after MPI_Init and before MPI_Finalize, at the same point of the program
// (it is collective: MPI_Comm_split_type, MPI_Bcast, MPI_Gather, MPI_Gatherv over `comm`):
//
//   const nlohmann::json topo = report::collect_topology_json(MPI_COMM_WORLD);
//   if (rank == 0) store(topo);   // the plumb.topo/1 document; null on every other rank
//
// It never throws and never prints: a host hwloc cannot read yields a host entry with a note.
nlohmann::json collect_topology_json(MPI_Comm comm);

}  // namespace plumb::report
