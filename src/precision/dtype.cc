#include "precision/dtype.h"

#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <span>
#include <string>

#include "common/strings.h"

namespace plumb::precision {
namespace {

// Indexed by DType's value: the order of the enum.
constexpr std::array<DTypeInfo, 15> kInfo{{
    {DType::kBool, "bool", 1, DKind::kBool},
    {DType::kInt8, "int8", 1, DKind::kSigned},
    {DType::kInt16, "int16", 2, DKind::kSigned},
    {DType::kInt32, "int32", 4, DKind::kSigned},
    {DType::kInt64, "int64", 8, DKind::kSigned},
    {DType::kUInt8, "uint8", 1, DKind::kUnsigned},
    {DType::kUInt16, "uint16", 2, DKind::kUnsigned},
    {DType::kUInt32, "uint32", 4, DKind::kUnsigned},
    {DType::kUInt64, "uint64", 8, DKind::kUnsigned},
    {DType::kFloat16, "float16", 2, DKind::kFloat},
    {DType::kBFloat16, "bfloat16", 2, DKind::kFloat},
    {DType::kFloat32, "float32", 4, DKind::kFloat},
    {DType::kFloat64, "float64", 8, DKind::kFloat},
    {DType::kComplex64, "complex64", 8, DKind::kComplex},
    {DType::kComplex128, "complex128", 16, DKind::kComplex},
}};

constexpr bool in_enum_order() {
  for (size_t i = 0; i < kInfo.size(); ++i) {
    if (static_cast<size_t>(kInfo[i].dtype) != i) return false;
  }
  return true;
}
static_assert(in_enum_order(), "kInfo must list the DTypes in the enum's order");

struct Spelling {
  std::string_view name;  // lower case; "torch." already taken off
  DType dtype;
};

// Every spelling, lower-cased: numpy's names and aliases, torch's (torch.float32, torch.bfloat16,
// as msprobe's dump.json writes them; MindSpore's Float32 lower-cased), safetensors' (F32, BF16,
// I64, BOOL: https://github.com/huggingface/safetensors, README "Format"), and the short --dtype
// forms. "i8" is int8 (safetensors' I8), never numpy's 8-byte typestr.
constexpr Spelling kSpellings[] = {
    {"bool", DType::kBool},         {"b1", DType::kBool},
    {"int8", DType::kInt8},         {"i8", DType::kInt8},
    {"int16", DType::kInt16},       {"i16", DType::kInt16},
    {"int32", DType::kInt32},       {"i32", DType::kInt32},
    {"int64", DType::kInt64},       {"i64", DType::kInt64},
    {"uint8", DType::kUInt8},       {"u8", DType::kUInt8},
    {"uint16", DType::kUInt16},     {"u16", DType::kUInt16},
    {"uint32", DType::kUInt32},     {"u32", DType::kUInt32},
    {"uint64", DType::kUInt64},     {"u64", DType::kUInt64},
    {"float16", DType::kFloat16},   {"f16", DType::kFloat16},      {"fp16", DType::kFloat16},
    {"half", DType::kFloat16},
    {"bfloat16", DType::kBFloat16}, {"bf16", DType::kBFloat16},
    {"float32", DType::kFloat32},   {"f32", DType::kFloat32},      {"fp32", DType::kFloat32},
    {"single", DType::kFloat32},
    {"float64", DType::kFloat64},   {"f64", DType::kFloat64},      {"fp64", DType::kFloat64},
    {"double", DType::kFloat64},
    {"complex64", DType::kComplex64},   {"c64", DType::kComplex64},
    {"complex128", DType::kComplex128}, {"c128", DType::kComplex128},
};

// torch's short aliases (torch/_C/_VariableFunctions: torch.float is float32, torch.long int64),
// read only after "torch.": bare, numpy means other types by them (float and int are 64-bit in
// numpy, byte is int8, cfloat complex128).
constexpr Spelling kTorchAliases[] = {
    {"float", DType::kFloat32}, {"double", DType::kFloat64}, {"half", DType::kFloat16},
    {"short", DType::kInt16},   {"int", DType::kInt32},      {"long", DType::kInt64},
    {"byte", DType::kUInt8},    {"cfloat", DType::kComplex64}, {"cdouble", DType::kComplex128},
};

std::optional<DType> find_spelling(std::string_view key, std::span<const Spelling> table) {
  for (const Spelling& spelling : table) {
    if (spelling.name == key) return spelling.dtype;
  }
  return std::nullopt;
}

}  // namespace

const DTypeInfo& dtype_info(DType dtype) { return kInfo[static_cast<size_t>(dtype)]; }

std::optional<DType> dtype_from_name(std::string_view name) {
  std::string key = to_lower(name);
  constexpr std::string_view kTorch = "torch.";
  if (!key.starts_with(kTorch)) return find_spelling(key, kSpellings);
  key.erase(0, kTorch.size());
  const std::optional<DType> alias = find_spelling(key, kTorchAliases);
  return alias ? alias : find_spelling(key, kSpellings);
}

// IEEE 754-2008 binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits. Every value
// is a double exactly: subnormals are fraction × 2^-24, normals (1024 + fraction) × 2^(e-25).
double half_to_double(uint16_t bits) {
  const bool negative = (bits & 0x8000u) != 0;
  const int exponent = (bits >> 10) & 0x1f;
  const int fraction = bits & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = fraction == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(fraction), -24);
  } else {
    magnitude = std::ldexp(static_cast<double>(fraction | 0x400), exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

// bfloat16 is the upper half of an IEEE binary32 (1 sign, 8 exponent, 7 fraction bits): widened
// by shifting into a float, which a double holds exactly (NaN stays NaN, subnormals stay exact).
double bfloat16_to_double(uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
}

}  // namespace plumb::precision
