// Element types of the tensors plumb precision compares, and their names in the formats it reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace plumb::precision {

enum class DType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
};

enum class DKind : uint8_t { kBool, kSigned, kUnsigned, kFloat, kComplex };

struct DTypeInfo {
  DType dtype;
  std::string_view name;  // numpy's name ("float32", "complex64"); "bfloat16", which numpy lacks
  uint8_t bytes;          // per element
  DKind kind;
};

const DTypeInfo& dtype_info(DType dtype);
inline std::string_view dtype_name(DType dtype) { return dtype_info(dtype).name; }

// A name as numpy ("float32", "float16", "bool"), torch ("torch.float32", "torch.half",
// "torch.bfloat16", the msprobe dump's spelling), safetensors ("F32", "BF16", "I64", "BOOL") or
// --dtype ("fp16", "bf16", "f32") write it; nullopt when unknown.
std::optional<DType> dtype_from_name(std::string_view name);

// IEEE binary16 and bfloat16 bit patterns, exactly (subnormals, ±inf and NaN kept).
double half_to_double(uint16_t bits);
double bfloat16_to_double(uint16_t bits);

}  // namespace plumb::precision
