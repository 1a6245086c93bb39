#include "comm/dtype.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::comm {
namespace {

// max_exact: 2^(significand bits) for floating types (fp16: 11, bf16: 8, fp32: 24, fp64: 53);
// the type's largest positive value for integers.
constexpr std::array<DataTypeInfo, 6> kTypes = {{
    {DataType::kInt8, "int8", "int8", 1, 127.0},
    {DataType::kInt32, "int32", "int32", 4, 2147483647.0},
    {DataType::kFloat16, "float16", "half", 2, 2048.0},
    {DataType::kBFloat16, "bfloat16", "bfloat16", 2, 256.0},
    {DataType::kFloat32, "float32", "float", 4, 16777216.0},
    {DataType::kFloat64, "float64", "double", 8, 9007199254740992.0},
}};

struct Alias {
  std::string_view alias;
  DataType type;
};
constexpr std::array<Alias, 9> kAliases = {{
    {"char", DataType::kInt8},     {"int", DataType::kInt32},      {"half", DataType::kFloat16},
    {"fp16", DataType::kFloat16},  {"bf16", DataType::kBFloat16},  {"float", DataType::kFloat32},
    {"fp32", DataType::kFloat32},  {"double", DataType::kFloat64}, {"fp64", DataType::kFloat64},
}};

template <class T>
void store_as(void* buffer, size_t index, T value) {
  std::memcpy(static_cast<char*>(buffer) + index * sizeof(T), &value, sizeof(T));
}

template <class T>
T load_as(const void* buffer, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const char*>(buffer) + index * sizeof(T), sizeof(T));
  return value;
}

}  // namespace

const DataTypeInfo& info(DataType type) { return kTypes[static_cast<size_t>(type)]; }

std::span<const DataTypeInfo> all_data_types() { return kTypes; }

DataType parse_data_type(std::string_view name) {
  for (const DataTypeInfo& t : kTypes) {
    if (t.name == name) return t.type;
  }
  for (const Alias& a : kAliases) {
    if (a.alias == name) return a.type;
  }
  std::vector<std::string> names;
  for (const DataTypeInfo& t : kTypes) names.emplace_back(t.name);
  throw Error(unknown_name("--dtype", "data type", name, names));
}

uint16_t float_to_half(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal half (or zero): scale into the 10-bit field
    const float magnitude = std::bit_cast<float>(abs);
    const auto scaled = static_cast<uint32_t>(std::nearbyint(magnitude * 16777216.0f));  // 2^24
    return static_cast<uint16_t>(sign | scaled);
  }
  // Normal: rebias exponent (127 -> 15) and round the 13 dropped bits to nearest even.
  const uint32_t rebased = abs - 0x38000000u;
  const uint32_t round = 0xfffu + ((rebased >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rebased + round) >> 13));
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = static_cast<float>(mantissa) / 16777216.0f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t float_to_bfloat16(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // nan
  const uint32_t round = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + round) >> 16);
}

float bfloat16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

void store(DataType type, void* buffer, size_t index, double value) {
  switch (type) {
    case DataType::kInt8: return store_as<int8_t>(buffer, index, static_cast<int8_t>(value));
    case DataType::kInt32: return store_as<int32_t>(buffer, index, static_cast<int32_t>(value));
    case DataType::kFloat16:
      return store_as<uint16_t>(buffer, index, float_to_half(static_cast<float>(value)));
    case DataType::kBFloat16:
      return store_as<uint16_t>(buffer, index, float_to_bfloat16(static_cast<float>(value)));
    case DataType::kFloat32: return store_as<float>(buffer, index, static_cast<float>(value));
    case DataType::kFloat64: return store_as<double>(buffer, index, value);
  }
}

double load(DataType type, const void* buffer, size_t index) {
  switch (type) {
    case DataType::kInt8: return load_as<int8_t>(buffer, index);
    case DataType::kInt32: return load_as<int32_t>(buffer, index);
    case DataType::kFloat16: return half_to_float(load_as<uint16_t>(buffer, index));
    case DataType::kBFloat16: return bfloat16_to_float(load_as<uint16_t>(buffer, index));
    case DataType::kFloat32: return load_as<float>(buffer, index);
    case DataType::kFloat64: return load_as<double>(buffer, index);
  }
  return 0.0;
}

}  // namespace plumb::comm
