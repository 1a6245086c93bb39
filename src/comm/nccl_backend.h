// The NCCL backend: collectives on GPU memory through libnccl.so.2 and the CUDA runtime, both
// opened with dlopen at run time (no CUDA or NCCL headers at build time). MPI starts the ranks,
// carries NCCL's unique id and all host-side values; CUDA events time the operations.
#pragma once

#include <memory>

#include "comm/communicator.h"
#include "comm/mpi_backend.h"

namespace plumb::comm {

// Loads the libraries, picks this rank's GPU (local rank modulo the device count) and creates a
// NCCL communicator over `control`'s ranks. Throws plumb::Error with one clear line when a
// library or a GPU is missing. PLUMB_NCCL_LIBRARY and PLUMB_CUDART_LIBRARY, when set, name the
// files to load instead of the usual names (libnccl.so.2, libcudart.so.*).
std::unique_ptr<Communicator> make_nccl_communicator(std::unique_ptr<MpiCommunicator> control);

}  // namespace plumb::comm
