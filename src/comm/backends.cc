#include "comm/backends.h"

#include <fmt/format.h>

#include <vector>

#include "comm/nccl_backend.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::comm {

std::span<const BackendEntry> backends() {
  static const std::vector<BackendEntry> kTable = {
      {"mpi", "MPI collectives on host memory (the default)",
       [](std::unique_ptr<MpiCommunicator> world) -> std::unique_ptr<Communicator> {
         return world;
       }},
      {"nccl", "NCCL on GPU memory, loaded at run time with dlopen",
       [](std::unique_ptr<MpiCommunicator> world) { return make_nccl_communicator(std::move(world)); }},
  };
  return kTable;
}

const BackendEntry& find_backend(std::string_view name) {
  std::vector<std::string> names;
  for (const BackendEntry& b : backends()) {
    if (b.name == name) return b;
    names.push_back(b.name);
  }
  throw Error(unknown_name("--backend", "backend", name, names));
}

}  // namespace plumb::comm
