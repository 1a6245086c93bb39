#include "step/classify.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <span>
#include <utility>

namespace plumb::step {
namespace {

// Lower-case letters and digits only: "_allgather_base" and "AllGather" and "all_gather" meet.
std::string squash(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

// Squashed stems, most specific first ("reducescatter" before "reduce", "allreduce" before
// "reduce"). The names come from PyTorch c10d (ProcessGroupNCCL's op names), NCCL's kernel names
// and HCCL's hcom ops (docs/step.md, "Classification").
constexpr std::array<std::pair<std::string_view, CollectiveKind>, 16> kStems{{
    {"reducescatter", CollectiveKind::kReduceScatter},
    {"allreduce", CollectiveKind::kAllReduce},
    {"allgather", CollectiveKind::kAllGather},
    {"alltoall", CollectiveKind::kAllToAll},
    {"alltoallv", CollectiveKind::kAllToAll},
    {"broadcast", CollectiveKind::kBroadcast},
    {"bcast", CollectiveKind::kBroadcast},
    {"barrier", CollectiveKind::kBarrier},
    {"sendrecv", CollectiveKind::kSendRecv},
    {"batchisendirecv", CollectiveKind::kSendRecv},
    {"send", CollectiveKind::kSendRecv},
    {"recv", CollectiveKind::kSendRecv},
    {"receive", CollectiveKind::kSendRecv},
    {"scatter", CollectiveKind::kSendRecv},
    {"gather", CollectiveKind::kSendRecv},
    {"reduce", CollectiveKind::kReduce},
}};

std::optional<CollectiveKind> kind_of_stem(std::string_view squashed) {
  for (const auto& [stem, kind] : kStems) {
    if (squashed.starts_with(stem)) return kind;
  }
  return std::nullopt;
}

// Strips a known prefix ("c10d::", "nccl:", "hcom", "ncclDevKernel_") and returns the rest, or
// nullopt when `name` has none of `prefixes`.
std::optional<std::string_view> after_prefix(std::string_view name,
                                             std::span<const std::string_view> prefixes) {
  for (std::string_view prefix : prefixes) {
    if (name.starts_with(prefix)) return name.substr(prefix.size());
  }
  return std::nullopt;
}

}  // namespace

std::optional<CollectiveKind> kind_from_op_name(std::string_view name) {
  static constexpr std::array<std::string_view, 7> kPrefixes{
      "c10d::", "nccl:", "gloo:", "hcom_", "Hcom", "hcom", "HCOM_"};
  std::optional<std::string_view> rest = after_prefix(name, kPrefixes);
  if (rest) return kind_of_stem(squash(*rest));
  // A bare `Collective name` argument ("allreduce", "_allgather_base", "all_to_all",
  // "reduce_scatter_tensor_coalesced").
  return kind_of_stem(squash(name));
}

bool is_nccl_kernel(std::string_view kernel) {
  return kernel.starts_with("ncclKernel_") || kernel.starts_with("ncclDevKernel_") ||
         kernel.starts_with("void ncclKernel_") || kernel.starts_with("void ncclDevKernel_");
}

std::optional<CollectiveKind> kind_from_kernel_name(std::string_view kernel) {
  if (!is_nccl_kernel(kernel)) return std::nullopt;
  if (kernel.starts_with("void ")) kernel.remove_prefix(5);
  kernel.remove_prefix(kernel.find('_') + 1);  // after ncclKernel_ / ncclDevKernel_
  std::string_view word = kernel.substr(0, kernel.find_first_of("_(<"));
  return kind_of_stem(squash(word)).value_or(CollectiveKind::kUnknown);
}

std::string_view kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "allreduce";
    case CollectiveKind::kReduceScatter: return "reducescatter";
    case CollectiveKind::kAllGather: return "allgather";
    case CollectiveKind::kAllToAll: return "alltoall";
    case CollectiveKind::kSendRecv: return "sendrecv";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kReduce: return "reduce";
    case CollectiveKind::kBarrier: return "barrier";
    case CollectiveKind::kUnknown: break;
  }
  return "unknown";
}

std::optional<size_t> dtype_bytes(std::string_view dtype) {
  // PyTorch's names, and HCCL's (FP32, BFP16, INT8, ...).
  static constexpr std::array<std::pair<std::string_view, size_t>, 25> kSizes{{
      {"float", 4},   {"float32", 4}, {"fp32", 4},     {"int", 4},       {"int32", 4},
      {"uint32", 4},  {"double", 8},  {"float64", 8},  {"fp64", 8},      {"long", 8},
      {"int64", 8},   {"uint64", 8},  {"half", 2},     {"float16", 2},   {"fp16", 2},
      {"bfloat16", 2}, {"bf16", 2},   {"bfp16", 2},   {"short", 2},    {"int16", 2},     {"char", 1},
      {"byte", 1},    {"int8", 1},    {"uint8", 1},    {"bool", 1},
  }};
  std::string_view name = dtype;
  if (name.starts_with("c10::")) name.remove_prefix(5);
  if (name.starts_with("torch.")) name.remove_prefix(6);
  std::string squashed = squash(name);
  for (const auto& [key, size] : kSizes) {
    if (squashed == key) return size;
  }
  return std::nullopt;
}

}  // namespace plumb::step
