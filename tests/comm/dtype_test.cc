#include "comm/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/error.h"

namespace plumb::comm {
namespace {

TEST(Half, KnownEncodings) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);    // largest finite half
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);    // rounds to infinity
  EXPECT_EQ(float_to_half(5.960464477539063e-08f), 0x0001);  // 2^-24, smallest subnormal
  EXPECT_EQ(float_to_half(2049.0f), float_to_half(2048.0f));  // tie rounds to even
  EXPECT_EQ(half_to_float(float_to_half(2051.0f)), 2052.0f);  // tie rounds to even (up)
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
}

TEST(Half, EveryFiniteHalfRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    if ((h & 0x7c00) == 0x7c00) continue;  // inf and nan
    ASSERT_EQ(float_to_half(half_to_float(h)), h) << std::hex << bits;
  }
}

TEST(BFloat16, KnownEncodings) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(-1.0f), 0xbf80);
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(256.0f)), 256.0f);
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(257.0f)), 256.0f);  // tie to even
  EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(259.0f)), 260.0f);  // tie to even (up)
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    if ((b & 0x7f80) == 0x7f80) continue;
    ASSERT_EQ(float_to_bfloat16(bfloat16_to_float(b)), b);
  }
}

TEST(DataType, ExactRangeHoldsInEveryType) {
  for (const DataTypeInfo& t : all_data_types()) {
    std::vector<unsigned char> buffer(t.size * 3);
    const double top = std::min(t.max_exact, 1e15);
    store(t.type, buffer.data(), 0, top);
    store(t.type, buffer.data(), 1, -top);
    store(t.type, buffer.data(), 2, top - 1);
    EXPECT_EQ(load(t.type, buffer.data(), 0), top) << t.name;
    EXPECT_EQ(load(t.type, buffer.data(), 1), -top) << t.name;
    EXPECT_EQ(load(t.type, buffer.data(), 2), top - 1) << t.name;
  }
}

TEST(DataType, ParsesNamesAndNcclTestsAliases) {
  EXPECT_EQ(parse_data_type("float32"), DataType::kFloat32);
  EXPECT_EQ(parse_data_type("float"), DataType::kFloat32);
  EXPECT_EQ(parse_data_type("half"), DataType::kFloat16);
  EXPECT_EQ(parse_data_type("bf16"), DataType::kBFloat16);
  EXPECT_EQ(parse_data_type("double"), DataType::kFloat64);
  EXPECT_EQ(parse_data_type("int8"), DataType::kInt8);
  EXPECT_EQ(info(DataType::kBFloat16).size, 2u);
  try {
    parse_data_type("flaot32");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--dtype: unknown data type 'flaot32' (did you mean 'float32'?); "
                           "expected one of int8, int32, float16, bfloat16, float32, float64");
  }
}

}  // namespace
}  // namespace plumb::comm
