// Element types a collective moves, with the facts the benchmark needs about each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace plumb::comm {

enum class DataType { kInt8, kInt32, kFloat16, kBFloat16, kFloat32, kFloat64 };

struct DataTypeInfo {
  DataType type;
  std::string_view name;       // as plumb and nccl-tests' -d spell it
  std::string_view short_name; // as nccl-tests' table prints it ("float", "half", "bfloat16")
  size_t size;                 // bytes per element
  // The largest integer M such that every integer in [-M, M] is exactly representable: the
  // correctness check keeps every input and every result inside this range.
  double max_exact;
};

const DataTypeInfo& info(DataType type);
std::span<const DataTypeInfo> all_data_types();

// Parses "float32" (also nccl-tests' "float", "half", "double", "int", "bf16", ...). Throws
// plumb::Error listing the valid names.
DataType parse_data_type(std::string_view name);

// Writes `value` (exactly representable in `type`) as element `index` of `buffer`.
void store(DataType type, void* buffer, size_t index, double value);
// Reads element `index` of `buffer` as a double.
double load(DataType type, const void* buffer, size_t index);

// IEEE 754 binary16 and bfloat16 conversions, rounding to nearest even.
uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(uint16_t bits);

}  // namespace plumb::comm
