#include "comm/measurement_origin.h"

#include <fmt/format.h>

#include <vector>

namespace plumb::comm {
namespace {

struct BackendRow {
  std::string_view backend;
  const char* library;
  const char* device;
};

constexpr BackendRow kBackends[] = {
    {"mpi", "MPI", "CPU"},          {"nccl", "NCCL", "GPU"},
    {"nccl-tests", "NCCL", "GPU"},  {"nccl-json", "NCCL", "GPU"},
    {"hccl-test", "HCCL", "Ascend NPU"},
};

// "a", "a and b", "a, b and c".
std::string spoken_list(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

}  // namespace

MeasuredOn measured_on(const nlohmann::json& comm) {
  MeasuredOn m;
  if (!comm.is_object()) return m;
  if (const auto it = comm.find("backend"); it != comm.end() && it->is_string()) {
    m.backend = it->get<std::string>();
  }
  if (const auto it = comm.find("ranks"); it != comm.end() && it->is_number_integer()) {
    m.ranks = it->get<int64_t>();
  }
  return m;
}

BackendKind backend_kind(std::string_view backend) {
  for (const BackendRow& row : kBackends) {
    if (row.backend == backend) return {row.library, row.device};
  }
  return {};
}

std::string mismatch_text(const BackendKind& measured, int64_t measured_ranks,
                          const BackendKind& target, int64_t target_ranks) {
  std::vector<std::string> facets;
  if (!measured.library.empty() && !target.library.empty() && measured.library != target.library) {
    facets.push_back(fmt::format("backend ({}, not {})", measured.library, target.library));
  }
  if (!measured.device.empty() && !target.device.empty() && measured.device != target.device) {
    facets.push_back(fmt::format("device kind ({}, not {})", measured.device, target.device));
  }
  if (measured_ranks > 0 && target_ranks > 0 && measured_ranks != target_ranks) {
    facets.push_back(fmt::format("world size ({} ranks, not {})", measured_ranks, target_ranks));
  }
  return facets.empty() ? "" : "another " + spoken_list(facets);
}

}  // namespace plumb::comm
