// The dtype table, the names each format writes, and the exact widening of float16 and bfloat16;
// the tensor basics (elements, byte sizes, shapes in messages, owned and mapped tensors).
#include "precision/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "precision/tensor.h"

namespace plumb::precision {
namespace {

TEST(DType, TableInEnumOrderWithNumpyNamesAndSizes) {
  EXPECT_EQ(dtype_name(DType::kFloat32), "float32");
  EXPECT_EQ(dtype_name(DType::kBFloat16), "bfloat16");
  EXPECT_EQ(dtype_name(DType::kComplex128), "complex128");
  EXPECT_EQ(dtype_info(DType::kBool).bytes, 1);
  EXPECT_EQ(dtype_info(DType::kUInt16).bytes, 2);
  EXPECT_EQ(dtype_info(DType::kInt64).bytes, 8);
  EXPECT_EQ(dtype_info(DType::kComplex64).bytes, 8);
  EXPECT_EQ(dtype_info(DType::kComplex128).bytes, 16);
  EXPECT_EQ(dtype_info(DType::kBFloat16).kind, DKind::kFloat);
  EXPECT_EQ(dtype_info(DType::kUInt64).kind, DKind::kUnsigned);
  EXPECT_EQ(dtype_info(DType::kInt8).kind, DKind::kSigned);
  for (int i = 0; i <= static_cast<int>(DType::kComplex128); ++i) {
    EXPECT_EQ(static_cast<int>(dtype_info(static_cast<DType>(i)).dtype), i);
  }
}

TEST(DType, NamesOfNumpyTorchSafetensorsAndTheCommandLine) {
  const std::pair<const char*, DType> cases[] = {
      {"float32", DType::kFloat32},        {"torch.float32", DType::kFloat32}, {"F32", DType::kFloat32},
      {"f32", DType::kFloat32},            {"fp32", DType::kFloat32},          {"torch.float", DType::kFloat32},
      {"float16", DType::kFloat16},        {"torch.half", DType::kFloat16},    {"F16", DType::kFloat16},
      {"fp16", DType::kFloat16},           {"torch.bfloat16", DType::kBFloat16}, {"BF16", DType::kBFloat16},
      {"bf16", DType::kBFloat16},          {"torch.float64", DType::kFloat64}, {"torch.double", DType::kFloat64},
      {"F64", DType::kFloat64},            {"bool", DType::kBool},             {"BOOL", DType::kBool},
      {"torch.bool", DType::kBool},        {"I8", DType::kInt8},               {"i8", DType::kInt8},
      {"int8", DType::kInt8},              {"torch.int16", DType::kInt16},     {"torch.short", DType::kInt16},
      {"torch.int32", DType::kInt32},      {"torch.int", DType::kInt32},       {"I64", DType::kInt64},
      {"torch.long", DType::kInt64},       {"torch.int64", DType::kInt64},     {"U8", DType::kUInt8},
      {"torch.uint8", DType::kUInt8},      {"U16", DType::kUInt16},            {"uint32", DType::kUInt32},
      {"U64", DType::kUInt64},             {"complex64", DType::kComplex64},   {"torch.cfloat", DType::kComplex64},
      {"torch.complex128", DType::kComplex128}, {"Float32", DType::kFloat32},
      {"BFloat16", DType::kBFloat16},      {"torch.byte", DType::kUInt8},      {"torch.cdouble", DType::kComplex128},
      {"half", DType::kFloat16},           {"double", DType::kFloat64},        {"torch.f32", DType::kFloat32},
  };
  for (const auto& [name, dtype] : cases) {
    const std::optional<DType> found = dtype_from_name(name);
    ASSERT_TRUE(found.has_value()) << name;
    EXPECT_EQ(*found, dtype) << name;
  }
  // numpy's float, int and cfloat are 64-bit (and its byte is int8): torch's short aliases only
  // with their prefix.
  for (const char* unknown : {"", "f4", "<f4", "F8_E4M3", "torch.float8_e4m3fn", "torch.", "float128", "object",
                              "float", "int", "long", "byte", "cfloat", "torch.f4"}) {
    EXPECT_FALSE(dtype_from_name(unknown).has_value()) << unknown;
  }
}

// Bit patterns from IEEE 754-2008 binary16 (1 sign, 5 exponent bits biased by 15, 10 fraction
// bits): 0x3c00 = 1, 0xc000 = -2, 0x7bff = 65504 (the largest), 0x0400 = 2^-14 (the smallest
// normal), 0x0001 = 2^-24 (the smallest subnormal), 0x03ff = 1023 × 2^-24, 0x3555 = 0.333251953125.
TEST(DType, HalfToDoubleIsExact) {
  EXPECT_EQ(half_to_double(0x3c00), 1.0);
  EXPECT_EQ(half_to_double(0xc000), -2.0);
  EXPECT_EQ(half_to_double(0x7bff), 65504.0);
  EXPECT_EQ(half_to_double(0x0400), std::ldexp(1.0, -14));
  EXPECT_EQ(half_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(half_to_double(0x03ff), std::ldexp(1023.0, -24));
  EXPECT_EQ(half_to_double(0x3555), 0.333251953125);
  EXPECT_EQ(half_to_double(0x0000), 0.0);
  EXPECT_FALSE(std::signbit(half_to_double(0x0000)));
  EXPECT_TRUE(std::signbit(half_to_double(0x8000)));
  EXPECT_EQ(half_to_double(0x7c00), std::numeric_limits<double>::infinity());
  EXPECT_EQ(half_to_double(0xfc00), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(half_to_double(0x7e00)));
  EXPECT_TRUE(std::isnan(half_to_double(0x7c01)));
  EXPECT_TRUE(std::isnan(half_to_double(0xfe00)));
}

// bfloat16 is binary32's upper 16 bits: 0x3f80 = 1, 0xc040 = -3, 0x7f7f = (2 - 2^-7) × 2^127 (the
// largest), 0x0001 = 2^-133 (the smallest subnormal), 0x3eab = 0.333984375.
TEST(DType, BFloat16ToDoubleIsExact) {
  EXPECT_EQ(bfloat16_to_double(0x3f80), 1.0);
  EXPECT_EQ(bfloat16_to_double(0xc040), -3.0);
  EXPECT_EQ(bfloat16_to_double(0x7f7f), std::ldexp(255.0, 120));
  EXPECT_EQ(bfloat16_to_double(0x0001), std::ldexp(1.0, -133));
  EXPECT_EQ(bfloat16_to_double(0x3eab), 0.333984375);
  EXPECT_TRUE(std::signbit(bfloat16_to_double(0x8000)));
  EXPECT_EQ(bfloat16_to_double(0x7f80), std::numeric_limits<double>::infinity());
  EXPECT_EQ(bfloat16_to_double(0xff80), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(bfloat16_to_double(0x7fc0)));
  EXPECT_TRUE(std::isnan(bfloat16_to_double(0x7f81)));
}

TEST(DType, EveryHalfRoundTripsThroughFloat) {
  // Each of the 65536 patterns, widened, is the float the same bits make as binary16 → binary32
  // by the textbook rule: the double narrows to a float without loss, and back to the same bits.
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const double value = half_to_double(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_EQ(bits & 0x7c00u, 0x7c00u);
      EXPECT_NE(bits & 0x3ffu, 0u);
      continue;
    }
    EXPECT_EQ(static_cast<double>(static_cast<float>(value)), value) << bits;
    // Back to binary16 by its definition: the sign, then the magnitude's exponent and fraction.
    const double magnitude = std::fabs(value);
    int exponent = 0;
    std::frexp(magnitude, &exponent);  // magnitude = m × 2^exponent, m in [0.5, 1)
    uint32_t back = 0;
    if (std::isinf(magnitude)) back = 0x7c00;
    else if (magnitude < std::ldexp(1.0, -14)) back = static_cast<uint32_t>(std::ldexp(magnitude, 24));
    else back = (static_cast<uint32_t>(exponent + 14) << 10) |
                (static_cast<uint32_t>(std::ldexp(magnitude, 11 - exponent)) & 0x3ffu);
    if (std::signbit(value)) back |= 0x8000;
    EXPECT_EQ(back, bits);
  }
}

TEST(Tensor, ElementsBytesAndShapeText) {
  Tensor t;
  t.dtype = DType::kFloat16;
  EXPECT_EQ(t.elements(), 1u);  // a scalar
  EXPECT_EQ(t.bytes(), 2u);
  EXPECT_EQ(shape_text(t.shape), "[]");
  t.shape = {2, 3, 4};
  EXPECT_EQ(t.elements(), 24u);
  EXPECT_EQ(t.bytes(), 48u);
  EXPECT_EQ(shape_text(t.shape), "[2, 3, 4]");
  t.shape = {5, 0};
  EXPECT_EQ(t.elements(), 0u);
  EXPECT_EQ(shape_text(t.shape), "[5, 0]");
}

TEST(Tensor, CheckedBytesRefusesNegativeSizesAndOverflow) {
  EXPECT_EQ(checked_bytes({2, 3}, DType::kFloat64), 48u);
  EXPECT_EQ(checked_bytes({}, DType::kComplex128), 16u);
  EXPECT_EQ(checked_bytes({int64_t{1} << 62, 0, int64_t{1} << 62}, DType::kFloat32), 0u);
  EXPECT_EQ(checked_bytes({int64_t{1} << 62, 4}, DType::kFloat32), std::nullopt);
  EXPECT_EQ(checked_bytes({int64_t{1} << 61}, DType::kFloat64), std::nullopt);  // 2^64 exactly
  EXPECT_EQ(checked_bytes({int64_t{1} << 60}, DType::kFloat64), uint64_t{1} << 63);
  EXPECT_EQ(checked_bytes({3, -1}, DType::kInt8), std::nullopt);
}

TEST(Tensor, OwnedTensorKeepsItsBytesAndRefusesAWrongSize) {
  std::vector<std::byte> bytes(12, std::byte{7});
  const Tensor t = owned_tensor("x", DType::kFloat32, {3}, bytes);
  EXPECT_EQ(t.name, "x");
  EXPECT_EQ(t.bytes(), 12u);
  ASSERT_NE(t.data, nullptr);
  EXPECT_EQ(t.data[11], std::byte{7});
  try {
    owned_tensor("x.bin", DType::kFloat32, {2, 2}, bytes);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "x.bin: 12 bytes for shape [2, 2] of float32, which needs 16");
  }
}

TEST(Tensor, ViewTensorPointsIntoTheOwnerWhenAlignedAndCopiesWhenNot) {
  auto buffer = std::make_shared<std::vector<double>>(std::vector<double>{1.5, 2.5, 3.5});
  const auto* base = reinterpret_cast<const std::byte*>(buffer->data());
  const Tensor aligned = view_tensor("a", DType::kFloat32, {4}, base + 4, buffer);
  EXPECT_EQ(aligned.data, base + 4);
  EXPECT_EQ(aligned.owner, buffer);
  const Tensor unaligned = view_tensor("b", DType::kFloat32, {4}, base + 2, buffer);
  EXPECT_NE(unaligned.data, base + 2);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(unaligned.data) % 4, 0u);
  EXPECT_EQ(std::memcmp(unaligned.data, base + 2, 16), 0);
  const Tensor complex = view_tensor("c", DType::kComplex64, {1}, base + 4, buffer);
  EXPECT_EQ(complex.data, base + 4);  // two floats: 4-byte alignment is enough
}

}  // namespace
}  // namespace plumb::precision
