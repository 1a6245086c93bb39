// The table of backends `plumb comm --backend` can use. Every backend runs on ranks started by an
// MPI launcher; MPI also carries the host-side values.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "comm/communicator.h"
#include "comm/mpi_backend.h"

namespace plumb::comm {

struct BackendEntry {
  std::string name;
  std::string summary;
  std::function<std::unique_ptr<Communicator>(std::unique_ptr<MpiCommunicator>)> make;
};

std::span<const BackendEntry> backends();

// The entry named `name`; throws plumb::Error listing the valid names.
const BackendEntry& find_backend(std::string_view name);

}  // namespace plumb::comm
