// The .safetensors reader against files built byte for byte from the format's README
// (tests/fixtures/precision/safetensors/make_safetensors.py), with a worked check of those bytes,
// every element, the zero-copy path, and each refusal's exact message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "common/error.h"
#include "mem/input.h"
#include "precision/readers.h"

namespace plumb::precision {
namespace {

const std::string kDir = PLUMB_TEST_FIXTURES "/precision/safetensors/";

template <typename T>
T at(const Tensor& t, size_t i) {
  T v;
  std::memcpy(&v, t.data + i * sizeof(T), sizeof v);
  return v;
}

uint64_t le64(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  return v;
}

// The README's layout, read off the file: N = 272 (0x110) in the first 8 bytes, the JSON header
// in the next 272 (no padding needed: 8 + 272 is a multiple of 8), then the 35-byte buffer.
TEST(SafetensorsReader, WorkedExampleOfTheBytes) {
  const mem::InputBytes input = mem::load_input(kDir + "model.safetensors");
  const std::string_view bytes = input.bytes();
  ASSERT_EQ(bytes.size(), 315u);
  EXPECT_EQ(le64(bytes), 272u);
  EXPECT_EQ(bytes.substr(8, 272),
            R"({"__metadata__":{"format":"pt"},)"
            R"("bias":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]},)"
            R"("empty":{"dtype":"F16","shape":[0,4],"data_offsets":[35,35]},)"
            R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[32,35]},)"
            R"("weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})");
  const std::string_view buffer = bytes.substr(280);
  EXPECT_EQ(buffer.size(), 35u);
  EXPECT_EQ(buffer.substr(0, 8), std::string_view("\x00\x00\x00\x3f\x00\x00\xa0\xbf", 8));  // 0.5f, -1.25f
  EXPECT_EQ(buffer.substr(24, 8), std::string_view("\x80\x3f\x40\xc0\x80\x7f\x01\x00", 8));  // the bf16 bias
  EXPECT_EQ(buffer.substr(32), std::string_view("\x01\x00\x01", 3));
}

TEST(SafetensorsReader, TensorsInOffsetOrderNamedByKeyPointingIntoTheMapping) {
  const mem::InputBytes input = mem::load_input(kDir + "model.safetensors");
  const std::vector<Tensor> tensors = read_safetensors(input, {});
  ASSERT_EQ(tensors.size(), 4u);  // __metadata__ is not a tensor
  const std::string path = kDir + "model.safetensors";
  EXPECT_EQ(tensors[0].name, path + ":weight");
  EXPECT_EQ(tensors[1].name, path + ":bias");
  EXPECT_EQ(tensors[2].name, path + ":mask");
  EXPECT_EQ(tensors[3].name, path + ":empty");

  const Tensor& weight = tensors[0];
  EXPECT_EQ(weight.dtype, DType::kFloat32);
  EXPECT_EQ(weight.shape, (std::vector<int64_t>{2, 3}));
  const float want[] = {0.5f, -1.25f, 3.0f, 1024.0f, -0.0f, 6.5f};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(at<float>(weight, i), want[i]);
  EXPECT_TRUE(std::signbit(at<float>(weight, 4)));

  const Tensor& bias = tensors[1];
  EXPECT_EQ(bias.dtype, DType::kBFloat16);
  EXPECT_EQ(bfloat16_to_double(at<uint16_t>(bias, 0)), 1.0);
  EXPECT_EQ(bfloat16_to_double(at<uint16_t>(bias, 1)), -3.0);
  EXPECT_TRUE(std::isinf(bfloat16_to_double(at<uint16_t>(bias, 2))));
  EXPECT_EQ(bfloat16_to_double(at<uint16_t>(bias, 3)), std::ldexp(1.0, -133));

  EXPECT_EQ(tensors[2].dtype, DType::kBool);
  EXPECT_EQ(at<uint8_t>(tensors[2], 0) + 2 * at<uint8_t>(tensors[2], 1) + 4 * at<uint8_t>(tensors[2], 2), 5);
  EXPECT_EQ(tensors[3].shape, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(tensors[3].bytes(), 0u);

  const auto* base = reinterpret_cast<const std::byte*>(input.bytes().data());
  EXPECT_EQ(weight.data, base + 280);
  EXPECT_EQ(bias.data, base + 280 + 24);
  EXPECT_EQ(tensors[2].data, base + 280 + 32);
  EXPECT_EQ(weight.owner, input.owner());
}

TEST(SafetensorsReader, EveryDtype) {
  const std::vector<Tensor> t = read_tensors(kDir + "all_dtypes.safetensors");
  ASSERT_EQ(t.size(), 14u);
  const DType order[] = {DType::kComplex64, DType::kFloat64, DType::kInt64,  DType::kUInt64, DType::kFloat32,
                         DType::kInt32,     DType::kUInt32,  DType::kBFloat16, DType::kFloat16, DType::kInt16,
                         DType::kUInt16,    DType::kBool,    DType::kInt8,   DType::kUInt8};
  for (size_t i = 0; i < 14; ++i) {
    EXPECT_EQ(t[i].dtype, order[i]) << t[i].name;
    EXPECT_EQ(t[i].shape, (std::vector<int64_t>{2})) << t[i].name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t[i].data) % dtype_info(order[i]).bytes % 4, 0u) << t[i].name;
  }
  EXPECT_EQ(t[0].name, kDir + "all_dtypes.safetensors:c64");
  EXPECT_EQ(at<float>(t[0], 0), 1.5f);
  EXPECT_EQ(at<float>(t[0], 1), -2.5f);
  EXPECT_EQ(at<float>(t[0], 3), 1.0f);
  EXPECT_EQ(at<double>(t[1], 0), 0.1);
  EXPECT_EQ(at<double>(t[1], 1), -1e308);
  EXPECT_EQ(at<int64_t>(t[2], 0), INT64_MIN);
  EXPECT_EQ(at<int64_t>(t[2], 1), INT64_MAX);
  EXPECT_EQ(at<uint64_t>(t[3], 1), UINT64_MAX);
  EXPECT_EQ(at<float>(t[4], 0), 1.5f);
  EXPECT_EQ(at<float>(t[4], 1), -std::ldexp(1.0f, -149));
  EXPECT_EQ(at<int32_t>(t[5], 0), INT32_MIN);
  EXPECT_EQ(at<uint32_t>(t[6], 1), UINT32_MAX);
  EXPECT_EQ(bfloat16_to_double(at<uint16_t>(t[7], 1)), -std::ldexp(255.0, 120));
  EXPECT_EQ(half_to_double(at<uint16_t>(t[8], 0)), 1.0);
  EXPECT_EQ(half_to_double(at<uint16_t>(t[8], 1)), -65504.0);
  EXPECT_EQ(at<int16_t>(t[9], 0), INT16_MIN);
  EXPECT_EQ(at<uint16_t>(t[10], 1), UINT16_MAX);
  EXPECT_EQ(at<uint8_t>(t[11], 0), 1);
  EXPECT_EQ(at<int8_t>(t[12], 0), -128);
  EXPECT_EQ(at<uint8_t>(t[13], 1), 255);
}

std::string error_of(const std::string& path) {
  try {
    read_tensors(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SafetensorsReader, RefusesFloat8AndATruncatedBuffer) {
  EXPECT_EQ(error_of(kDir + "f8.safetensors"),
            kDir + "f8.safetensors: header at byte 8: tensor 'x': 'dtype' is 'F8_E4M3' (an 8-bit float); plumb reads "
                   "BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, C64");
  EXPECT_EQ(error_of(kDir + "truncated.safetensors"),
            kDir + "truncated.safetensors: header at byte 8: tensor 'mask': data_offsets [32, 35] end past the byte "
                   "buffer's 32 bytes (from byte 280 to the file's end)");
}

// A file of this header (unpadded) and buffer, in memory.
std::string file_of(const std::string& header, const std::string& buffer = "") {
  std::string out;
  for (size_t i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + buffer;
}

std::string read_error(const std::string& bytes) {
  try {
    read_safetensors(mem::input_from_string(bytes, "x.safetensors"), {});
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string entry(const std::string& key, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + key + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
}

TEST(SafetensorsReader, EachMalformedFileHasItsOwnMessage) {
  const std::string a = entry("a", "F32", "[2]", "[0,8]");
  const std::pair<std::string, std::string> cases[] = {
      {std::string("\x05\x00\x00", 3), "x.safetensors: ends at byte 3, inside the 8-byte header length"},
      {std::string("\x00\xe1\xf5\x05\x00\x00\x00\x00{", 9),
       "x.safetensors: byte 0: the header is 100000000 bytes long, but the file ends at byte 9"},
      {std::string("\x01\xe1\xf5\x05\x00\x00\x00\x00{", 9),
       "x.safetensors: byte 0: the header is 100000001 bytes long, more than safetensors' limit of 100000000"},
      {file_of("[1]"), "x.safetensors: header at byte 8: expected '{' (a JSON object), found byte 0x5b"},
      {file_of(""), "x.safetensors: header at byte 8: expected '{' (a JSON object), found the header's end"},
      {file_of("{\"a\":}"), "x.safetensors: header at byte 13: not valid JSON: syntax error while parsing value - "
                            "unexpected '}'; expected '[', '{', or a literal"},
      {file_of("{" + a + "," + a + "}", std::string(8, '\0')),
       "x.safetensors: header at byte 8: the name 'a' appears twice; safetensors allows each name once"},
      {file_of("{\"x\":{\"dtype\":6e666}}"),  // found by fuzz/precision_safetensors
       "x.safetensors: header at byte 8: not valid JSON: a number beyond a double's range"},
      {file_of("{\"a\":[0]}"), "x.safetensors: header at byte 8: tensor 'a': not an object with 'dtype', 'shape' and "
                               "'data_offsets'"},
      {file_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[]}}"), "x.safetensors: header at byte 8: tensor 'a': no "
                                                          "'data_offsets'"},
      {file_of("{" + entry("a", "F128", "[2]", "[0,8]") + "}"),
       "x.safetensors: header at byte 8: tensor 'a': 'dtype' is 'F128'; plumb reads BOOL, U8, I8, I16, U16, I32, U32, "
       "I64, U64, F16, BF16, F32, F64, C64"},
      {file_of("{\"a\":{\"dtype\":7,\"shape\":[],\"data_offsets\":[0,4]}}"),
       "x.safetensors: header at byte 8: tensor 'a': 'dtype' is 7, not a name"},
      {file_of("{" + entry("a", "F32", "[2,-1]", "[0,8]") + "}"),
       "x.safetensors: header at byte 8: tensor 'a': 'shape' is [2,-1], not a list of sizes"},
      {file_of("{" + entry("a", "F32", "[[2]]", "[0,8]") + "}"),
       "x.safetensors: header at byte 8: tensor 'a': 'shape' is a list, not a list of sizes"},
      {file_of("{" + entry("a", "F32\\n", "[2]", "[0,8]") + "}"),
       "x.safetensors: header at byte 8: tensor 'a': 'dtype' is \"F32\\n\"; plumb reads BOOL, U8, I8, I16, U16, I32, "
       "U32, I64, U64, F16, BF16, F32, F64, C64"},
      {file_of("{" + entry("a", "F32", "[2]", "[8,0]") + "}"),
       "x.safetensors: header at byte 8: tensor 'a': 'data_offsets' is [8,0], not [begin, end] with begin <= end"},
      {file_of("{" + entry("a", "F32", "[2,3]", "[0,8]") + "}", std::string(8, '\0')),
       "x.safetensors: header at byte 8: tensor 'a': data_offsets [0, 8] hold 8 bytes; the shape [2, 3] of float32 "
       "needs 24"},
      {file_of("{" + entry("a", "F32", "[4611686018427387904,8]", "[0,8]") + "}", std::string(8, '\0')),
       "x.safetensors: header at byte 8: tensor 'a': data_offsets [0, 8] hold 8 bytes; the shape "
       "[4611686018427387904, 8] of float32 needs more than 2^64"},
      {file_of("{" + a + "," + entry("b", "I16", "[2]", "[6,10]") + "}", std::string(10, '\0')),
       "x.safetensors: header at byte 8: tensor 'b': data_offsets [6, 10] overlap those of tensor 'a', [0, 8]"},
      {file_of("{" + a + "," + entry("b", "I16", "[2]", "[10,14]") + "}", std::string(14, '\0')),
       "x.safetensors: header at byte 8: bytes [8, 10) of the byte buffer belong to no tensor; safetensors packs "
       "tensors without gaps"},
      {file_of("{" + a + "}", std::string(9, '\0')),
       "x.safetensors: header at byte 8: bytes [8, 9) of the byte buffer belong to no tensor; safetensors packs "
       "tensors without gaps"},
      {file_of("{\"a\":\"\xff\"}"), "x.safetensors: header at byte 14: not valid JSON: syntax error while parsing "
                                    "value - invalid string: ill-formed UTF-8 byte"},
  };
  for (const auto& [bytes, message] : cases) EXPECT_EQ(read_error(bytes), message);
}

TEST(SafetensorsReader, PaddedHeaderScalarAndUnalignedData) {
  // The writer's trailing spaces are part of the header; a scalar is shape []; data at an odd
  // offset is copied (so that it is aligned), not refused.
  const std::string header = "{" + entry("s", "F64", "[]", "[0,8]") + "}   ";
  const double value = -2.75;
  std::string buffer(8, '\0');
  std::memcpy(buffer.data(), &value, 8);
  const std::vector<Tensor> t = read_safetensors(mem::input_from_string(file_of(header, buffer), "x"), {});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(t[0].shape.empty());
  EXPECT_EQ(at<double>(t[0], 0), -2.75);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t[0].data) % 8, 0u);
}

}  // namespace
}  // namespace plumb::precision
