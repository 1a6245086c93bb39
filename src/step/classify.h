// Naming what device work does: the collective kind from the names PyTorch, NCCL and HCCL give it,
// and the element size of the dtype names found in collective arguments. Pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "step/trace.h"

namespace plumb::step {

// The kind a PyTorch collective name says: the kernel's `Collective name` argument ("allreduce",
// "_allgather_base", "_reduce_scatter_base", "all_to_all", "send", "recv", ...), a c10d CPU op
// ("c10d::allreduce_", "c10d::alltoall_base_"), an NCCL record ("nccl:all_reduce",
// "nccl:_all_gather_base"), a gloo CPU op ("gloo:all_reduce", "gloo:broadcast") or an HCCL op ("hcom_allReduce_", "HcomAllGather"). nullopt when the
// name is none of these.
std::optional<CollectiveKind> kind_from_op_name(std::string_view name);

// The kind from a kernel name alone: "ncclKernel_AllReduce_RING_LL_Sum_float(...)",
// "ncclDevKernel_AllGather_RING_LL(...)". SendRecv kernels return kSendRecv, which is only right
// when no better source exists (every collective can run as SendRecv). nullopt when the kernel is
// not an NCCL kernel.
std::optional<CollectiveKind> kind_from_kernel_name(std::string_view kernel);

// True for an NCCL kernel (ncclKernel_*, ncclDevKernel_*): communication whatever its kind.
bool is_nccl_kernel(std::string_view kernel);

// "allreduce", "reducescatter", ... — the names `plumb comm` uses; "unknown" for kUnknown.
std::string_view kind_name(CollectiveKind kind);

// Bytes per element of a dtype as PyTorch ("Float", "BFloat16", "c10::Half", "Long") or HCCL
// ("FP32", "BF16", "INT8") names it; nullopt when unknown.
std::optional<size_t> dtype_bytes(std::string_view dtype);

}  // namespace plumb::step
