#include "topo/collect.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <climits>

#include "common/environment.h"
#include "common/json.h"
#include "topo/topo_json.h"

namespace plumb::topo {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// This rank's entry in the record: its binding, its warning, and its host when it is the first
// rank there.
json rank_entry(const Topology& topo, const RankBinding& binding, bool with_host) {
  const std::optional<BindingWarning> warning = check_binding(topo, binding);
  return {{"binding", binding},
          {"warning", warning ? json(*warning) : json(nullptr)},
          {"topology", with_host ? json(topo) : json(nullptr)}};
}

void add_entry(TopoRecord& record, const json& entry) {
  record.ranks.push_back(entry.at("binding").get<RankBinding>());
  if (!entry.at("warning").is_null()) {
    record.warnings.push_back(entry.at("warning").get<BindingWarning>());
  }
  if (!entry.at("topology").is_null()) record.hosts.push_back(entry.at("topology").get<Topology>());
}

// The host's topology, probed by local rank 0 and broadcast to the others on `local`.
Topology host_topology(MPI_Comm local, int local_rank) {
  std::string text = local_rank == 0 ? dump(json(probe_topology())) : std::string();
  int size = static_cast<int>(text.size());
  MPI_Bcast(&size, 1, MPI_INT, 0, local);
  text.resize(static_cast<size_t>(size));
  MPI_Bcast(text.data(), size, MPI_CHAR, 0, local);
  return parse_json(text, "local rank 0's topology").get<Topology>();
}

// Every rank's string, on rank 0 (empty elsewhere).
std::vector<std::string> gather_on_root(MPI_Comm comm, const std::string& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank == 0 ? static_cast<size_t>(size) : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
  std::vector<int> offsets(lengths.size());
  long long total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += lengths[r];
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, comm);
  std::vector<std::string> out;
  for (size_t r = 0; r < lengths.size(); ++r) {
    out.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
  }
  return out;
}

}  // namespace

TopoRecord collect_local(const Topology& topo) {
  TopoRecord record;
  record.created = utc_timestamp();
  const RankBinding self = make_binding(topo, 0, 0, current_affinity(), accelerator_environment());
  add_entry(record, rank_entry(topo, self, true));
  return record;
}

TopoRecord collect_from_xml(const std::string& path) {
  TopoRecord record;
  record.created = utc_timestamp();
  record.hosts.push_back(load_topology_xml(path));
  return record;
}

TopoRecord collect_over_mpi(MPI_Comm comm) {
  int rank = 0, local_rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank);
  const Topology topo = host_topology(local, local_rank);
  MPI_Comm_free(&local);
  const RankBinding binding =
      make_binding(topo, rank, local_rank, current_affinity(), accelerator_environment());
  const std::vector<std::string> entries =
      gather_on_root(comm, dump(rank_entry(topo, binding, local_rank == 0)));
  TopoRecord record;
  if (rank != 0) return record;
  record.created = utc_timestamp();
  for (size_t r = 0; r < entries.size(); ++r) {
    add_entry(record, parse_json(entries[r], fmt::format("rank {}'s topology", r)));
  }
  return record;
}

}  // namespace plumb::topo
