// What a comm measurement was taken on — its backend's collective library, the device kind that
// library runs on, and the world size — so that `plumb plan --calibrate` and `plumb step
// --baseline` can say, in one line, when they apply a measurement to another kind of machine
// (a 2-rank MPI run on CPUs pricing an H100 plan, a GPU trace against a CPU baseline).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace plumb::comm {

// A collective library and the device kind it moves data on; empty when not known.
struct BackendKind {
  std::string library;  // "MPI", "NCCL", "HCCL"
  std::string device;   // "CPU", "GPU", "Ascend NPU"
};

// What a record's plumb.comm/1 part says: "backend" (plumb's mpi or nccl, or an importer's
// format name) and "ranks". Absent or mistyped fields read as empty / 0.
struct MeasuredOn {
  std::string backend;
  int64_t ranks = 0;
};
MeasuredOn measured_on(const nlohmann::json& comm);

// The backends' table: mpi → (MPI, CPU): plumb's MPI backend moves host memory; nccl and the
// nccl-tests importers (nccl-tests, nccl-json) → (NCCL, GPU); hccl-test → (HCCL, Ascend NPU);
// osu and anything else → unknown (OSU runs on host or device buffers alike).
BackendKind backend_kind(std::string_view backend);

// "another backend (MPI, not NCCL), device kind (CPU, not GPU) and world size (2 ranks, not
// 1024)": the facets that differ, each compared only where both sides know it (a world size of
// 0 or less is unknown); "" when none differs.
std::string mismatch_text(const BackendKind& measured, int64_t measured_ranks,
                          const BackendKind& target, int64_t target_ranks);

}  // namespace plumb::comm
