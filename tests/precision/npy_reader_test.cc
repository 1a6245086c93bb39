// The .npy reader against files numpy wrote (tests/fixtures/precision/npy/make_npy.py: every
// dtype, byte order and C/Fortran order, versions 1.0-3.0), every element checked exactly, and
// against hand-made headers for each refusal's exact message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "common/error.h"
#include "mem/input.h"
#include "precision/readers.h"

namespace plumb::precision {
namespace {

const std::string kDir = PLUMB_TEST_FIXTURES "/precision/npy/";
constexpr int kCount = 24;  // make_npy.py's SHAPE (2, 3, 4)

// Element i of a tensor as a double (the real part of a complex one; imag_at the other).
double real_at(const Tensor& t, size_t i) {
  const std::byte* p = t.data + i * dtype_info(t.dtype).bytes;
  const auto load = [p]<typename T>(T) { T v; std::memcpy(&v, p, sizeof v); return v; };
  switch (t.dtype) {
    case DType::kFloat16: return half_to_double(load(uint16_t{}));
    case DType::kBFloat16: return bfloat16_to_double(load(uint16_t{}));
    case DType::kFloat32: case DType::kComplex64: return load(float{});
    case DType::kFloat64: case DType::kComplex128: return load(double{});
    default: ADD_FAILURE() << "not a float"; return 0;
  }
}
double imag_at(const Tensor& t, size_t i) {
  const size_t half = dtype_info(t.dtype).bytes / 2u;
  const std::byte* p = t.data + i * dtype_info(t.dtype).bytes + half;
  if (half == 4) { float v; std::memcpy(&v, p, 4); return v; }
  double v;
  std::memcpy(&v, p, 8);
  return v;
}
int64_t signed_at(const Tensor& t, size_t i) {
  const size_t size = dtype_info(t.dtype).bytes;
  int64_t v = 0;
  std::memcpy(&v, t.data + i * size, size);
  const int shift = 64 - 8 * static_cast<int>(size);
  return static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;  // sign-extended
}
uint64_t unsigned_at(const Tensor& t, size_t i) {
  uint64_t v = 0;
  std::memcpy(&v, t.data + i * dtype_info(t.dtype).bytes, dtype_info(t.dtype).bytes);
  return v;
}

// make_npy.py's real_value: specials first, then steps of 0.375.
double expected_real(int k, DType component) {
  const double tiny = component == DType::kFloat16   ? std::ldexp(1.0, -24)
                      : component == DType::kFloat32 ? std::ldexp(1.0, -149)
                                                     : std::numeric_limits<double>::denorm_min();
  const double max = component == DType::kFloat16   ? 65504.0
                     : component == DType::kFloat32 ? static_cast<double>(std::numeric_limits<float>::max())
                                                    : std::numeric_limits<double>::max();
  switch (k) {
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    case 3: return std::numeric_limits<double>::quiet_NaN();
    case 4: return tiny;
    case 5: return max;
    case 6: return -0.0;
    default: return (k - 12) * 0.375;
  }
}

void expect_same(double got, double want, const std::string& where) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << where;
  } else {
    EXPECT_EQ(got, want) << where;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << where;
  }
}

// Every element against make_npy.py's formulas.
void expect_values(const Tensor& t, const std::string& where) {
  const DTypeInfo& info = dtype_info(t.dtype);
  const int bits = 8 * info.bytes;
  for (int k = 0; k < kCount; ++k) {
    const std::string at = where + " element " + std::to_string(k);
    const auto i = static_cast<size_t>(k);
    switch (info.kind) {
      case DKind::kBool: EXPECT_EQ(unsigned_at(t, i), k % 3 == 0 ? 1u : 0u) << at; break;
      case DKind::kSigned: {
        const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
        EXPECT_EQ(signed_at(t, i), k == 0 ? -max - 1 : k == 23 ? max : (k - 12) * 5) << at;
        break;
      }
      case DKind::kUnsigned: {
        const uint64_t max = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
        EXPECT_EQ(unsigned_at(t, i), k == 23 ? max : uint64_t(k) * 7) << at;
        break;
      }
      case DKind::kFloat: expect_same(real_at(t, i), expected_real(k, t.dtype), at); break;
      case DKind::kComplex: {
        const DType part = t.dtype == DType::kComplex64 ? DType::kFloat32 : DType::kFloat64;
        expect_same(real_at(t, i), expected_real(k, part), at);
        EXPECT_EQ(imag_at(t, i), k * 0.125 - 1) << at;
        break;
      }
    }
  }
}

constexpr DType kNpyTypes[] = {
    DType::kBool,    DType::kInt8,    DType::kInt16,   DType::kInt32,     DType::kInt64,
    DType::kUInt8,   DType::kUInt16,  DType::kUInt32,  DType::kUInt64,    DType::kFloat16,
    DType::kFloat32, DType::kFloat64, DType::kComplex64, DType::kComplex128,
};

TEST(NpyReader, EveryDtypeByteOrderLayoutAndVersionNumpyWrites) {
  int files = 0;
  for (DType dtype : kNpyTypes) {
    const std::string name(dtype_name(dtype));
    const std::vector<std::string> orders =
        dtype_info(dtype).bytes == 1 ? std::vector<std::string>{"na"} : std::vector<std::string>{"le", "be"};
    for (const std::string& order : orders) {
      for (const char* layout : {"c", "f"}) {
        for (int version = 1; version <= 3; ++version) {
          const std::string path = kDir + name + "_" + order + "_" + layout + "_v" + std::to_string(version) + ".npy";
          const std::vector<Tensor> tensors = read_tensors(path);
          ASSERT_EQ(tensors.size(), 1u) << path;
          const Tensor& t = tensors[0];
          EXPECT_EQ(t.name, path);
          EXPECT_EQ(t.dtype, dtype) << path;
          EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3, 4})) << path;
          expect_values(t, path);
          ++files;
        }
      }
    }
  }
  EXPECT_EQ(files, 3 * 3 * 2 + 11 * 3 * 2 * 2);  // one-byte types have one byte order
}

// The file's bytes, as numpy.lib.format documents them: the magic, version 1.0, a 2-byte header
// length of 118 so that the data starts at byte 128 (a multiple of 64), the dict, spaces, '\n'.
TEST(NpyReader, WorkedExampleOfTheBytesOfAVersion1File) {
  const mem::InputBytes input = mem::load_input(kDir + "float32_le_c_v1.npy");
  const std::string_view bytes = input.bytes();
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(bytes[6], '\x01');
  EXPECT_EQ(bytes[7], '\x00');
  EXPECT_EQ(static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8, 118);
  EXPECT_EQ(bytes.substr(10, 62), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }");
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes.size(), 128u + 24 * 4);
  const mem::InputBytes v2 = mem::load_input(kDir + "float32_le_c_v2.npy");
  EXPECT_EQ(v2.bytes().substr(6, 6), std::string_view("\x02\x00\x74\x00\x00\x00", 6));  // 4-byte length 116
  EXPECT_EQ(v2.bytes().substr(12, 10), "{'descr': ");
}

TEST(NpyReader, NativeCOrderPointsIntoTheMappingOthersAreCopiedOnce) {
  for (const char* name : {"float32_le_c_v1.npy", "int64_le_c_v3.npy", "uint8_na_c_v2.npy", "complex128_le_c_v1.npy",
                           "bool_na_f_v1.npy" /* not C order, but copied: */}) {
    const mem::InputBytes input = mem::load_input(kDir + name);
    const Tensor t = read_npy(input, {})[0];
    const auto* begin = reinterpret_cast<const std::byte*>(input.bytes().data());
    const bool inside = t.data >= begin && t.data + t.bytes() <= begin + input.bytes().size();
    EXPECT_EQ(inside, std::string_view(name) != "bool_na_f_v1.npy") << name;
    if (inside) {
      EXPECT_EQ(t.data, begin + 128) << name;
      EXPECT_EQ(t.owner, input.owner()) << name;
    }
  }
  for (const char* name : {"float32_be_c_v1.npy", "float32_le_f_v1.npy"}) {
    const mem::InputBytes input = mem::load_input(kDir + name);
    const Tensor t = read_npy(input, {})[0];
    const auto* begin = reinterpret_cast<const std::byte*>(input.bytes().data());
    EXPECT_FALSE(t.data >= begin && t.data < begin + input.bytes().size()) << name;
  }
}

TEST(NpyReader, ScalarAndZeroSizeArrays) {
  const Tensor scalar = read_tensors(kDir + "scalar.npy")[0];
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.elements(), 1u);
  EXPECT_EQ(real_at(scalar, 0), 3.5);
  const Tensor empty = read_tensors(kDir + "empty.npy")[0];
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(empty.elements(), 0u);
  EXPECT_EQ(empty.bytes(), 0u);
  const Tensor empty_f = read_tensors(kDir + "empty_f.npy")[0];  // big-endian, Fortran order
  EXPECT_EQ(empty_f.dtype, DType::kFloat64);
  EXPECT_EQ(empty_f.shape, (std::vector<int64_t>{2, 0, 3}));
  EXPECT_EQ(empty_f.bytes(), 0u);
}

std::string error_of(const std::string& path) {
  try {
    read_tensors(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "no error";
}

TEST(NpyReader, RefusesObjectStructuredAndStringArraysNamingTheByte) {
  EXPECT_EQ(error_of(kDir + "object.npy"),
            kDir + "object.npy: header at byte 20: 'descr' is '|O' (an object array); plumb reads numeric arrays only");
  EXPECT_EQ(error_of(kDir + "structured_v3.npy"),
            kDir + "structured_v3.npy: header at byte 22: 'descr' is a list of fields (a structured array); plumb "
                   "reads numeric arrays only");
  EXPECT_EQ(error_of(kDir + "unicode.npy"),
            kDir + "unicode.npy: header at byte 20: 'descr' is '<U2' (unicode strings); plumb reads numeric arrays "
                   "only");
}

TEST(NpyReader, RefusesATruncatedFile) {
  EXPECT_EQ(error_of(kDir + "truncated.npy"),
            kDir + "truncated.npy: data ends at byte 214; the header's shape [2, 3, 4] of float32 needs 96 bytes "
                   "from byte 128");
}

// A .npy of the given header (padded as numpy pads it) and data, in memory.
std::string npy_bytes(const std::string& header, const std::string& data = "", int major = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const size_t length_bytes = major == 1 ? 2 : 4;
  std::string text = header;
  while ((out.size() + length_bytes + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  for (size_t i = 0; i < length_bytes; ++i) out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  return out + text + data;
}

std::string read_error(const std::string& bytes) {
  try {
    read_npy(mem::input_from_string(bytes, "x.npy"), {});
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NpyReader, ByteOrderMarksNumpyAcceptsButDoesNotWrite) {
  const std::string big("\x40\x49\x0f\xdb", 4);  // 3.14159274 as a big-endian float32
  const std::string little("\xdb\x0f\x49\x40", 4);
  const std::pair<std::string, std::string> cases[] = {
      {"'>f4'", big}, {"'!f4'", big}, {"'=f4'", little}, {"'f4'", little}, {"'<f4'", little}};
  for (const auto& [descr, data] : cases) {
    const std::string bytes = npy_bytes("{'descr': " + descr + ", 'fortran_order': False, 'shape': (1,), }", data);
    const Tensor t = read_npy(mem::input_from_string(bytes, "x.npy"), {})[0];
    EXPECT_EQ(real_at(t, 0), static_cast<double>(3.14159274f)) << descr;
  }
}

TEST(NpyReader, HeadersOtherWritersWrite) {
  // Double quotes, no trailing comma, Python 2's long sizes, keys in another order.
  const std::string bytes =
      npy_bytes("{\"shape\": (2L, 1L), \"fortran_order\": True, \"descr\": \"<i2\"}", std::string("\x01\x00\xff\xff", 4));
  const Tensor t = read_npy(mem::input_from_string(bytes, "x.npy"), {})[0];
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(signed_at(t, 0), 1);
  EXPECT_EQ(signed_at(t, 1), -1);
}

TEST(NpyReader, FortranOrderOfFourDimensionsIntoCOrder) {
  // shape (2, 1, 3, 2): element [a, b, c, d] is stored at a + 2c + 6d (the first index fastest).
  std::string data;
  for (int8_t at = 0; at < 12; ++at) data += static_cast<char>(at);
  const Tensor t = read_npy(mem::input_from_string(
      npy_bytes("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 1, 3, 2), }", data), "x.npy"), {})[0];
  int i = 0;
  for (int a = 0; a < 2; ++a) {
    for (int c = 0; c < 3; ++c) {
      for (int d = 0; d < 2; ++d) EXPECT_EQ(signed_at(t, static_cast<size_t>(i++)), a + 2 * c + 6 * d);
    }
  }
}

TEST(NpyReader, EachMalformedHeaderHasItsOwnMessage) {
  const std::string f4 = "'descr': '<f4', 'fortran_order': False";
  const std::pair<std::string, std::string> cases[] = {
      {"", "x.npy: not a .npy file: it does not start with \\x93NUMPY"},
      {"PK\x03\x04 zip", "x.npy: not a .npy file: it does not start with \\x93NUMPY"},
      {"\x93NUM", "x.npy: ends at byte 4, inside the .npy preamble (magic, version, header length)"},
      {std::string("\x93NUMPY\x01\x00\x05", 9), "x.npy: ends at byte 9, inside the .npy preamble (magic, version, header length)"},
      {std::string("\x93NUMPY\x02\x00\x05\x00\x00", 11), "x.npy: ends at byte 11, inside the .npy preamble (magic, version, header "
                                        "length)"},
      {std::string("\x93NUMPY\x04\x00\x00\x00\x00\x00", 12),
       "x.npy: byte 6: .npy format version 4.0; plumb reads versions 1.0, 2.0 and 3.0"},
      {std::string("\x93NUMPY\x01\x01\x00\x00", 10),
       "x.npy: byte 6: .npy format version 1.1; plumb reads versions 1.0, 2.0 and 3.0"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{}", 12),
       "x.npy: byte 8: the header is 255 bytes long, but the file ends at byte 12"},
      {npy_bytes("['descr']"), "x.npy: header at byte 10: expected '{' (a dict literal), found '['"},
      {npy_bytes("{" + f4 + " 'shape': (1,)}"), "x.npy: header at byte 50: expected ',' or '}', found '''"},
      {npy_bytes("{" + f4 + ", 'shape': (1, x)}"),
       "x.npy: header at byte 64: expected a Python literal (a string, a number, True, False, None, a tuple, a list "
       "or a dict), found 'x'"},
      {npy_bytes("{'descr: '<f4'}") ,"x.npy: header at byte 20: expected ':', found '<'"},
      {npy_bytes("{" + f4 + ", 'shape': (1,)} x"), "x.npy: header at byte 66: expected the header's end after the "
                                                   "dict, found 'x'"},
      {npy_bytes("{" + f4 + ", 'shape': (99999999999999999999,)}"),
       "x.npy: header at byte 79: expected an integer below 2^63, found '9'"},
      {npy_bytes("{" + f4 + ", 'shape': " + std::string(40, '(') + "}"),
       "x.npy: header at byte 92: nested too deeply, found '('"},
      {npy_bytes("{" + f4 + "}"), "x.npy: header at byte 10: no 'shape'; a .npy header holds 'descr', "
                                  "'fortran_order' and 'shape'"},
      {npy_bytes("{" + f4 + ", 'shape': (), 'x': 1}"), "x.npy: header at byte 69: unexpected key 'x'; a .npy header "
                                                       "holds 'descr', 'fortran_order' and 'shape'"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}"),
       "x.npy: header at byte 44: 'fortran_order' is not True or False"},
      {npy_bytes("{" + f4 + ", 'shape': [1]}"), "x.npy: header at byte 60: 'shape' is not a tuple of sizes"},
      {npy_bytes("{" + f4 + ", 'shape': (2, -1)}"), "x.npy: header at byte 64: 'shape' holds -1, not a size"},
      {npy_bytes("{" + f4 + ", 'shape': (2, '3')}"), "x.npy: header at byte 64: 'shape' holds a non-integer, not a "
                                                    "size"},
      {npy_bytes("{'descr': '<f16', 'fortran_order': False, 'shape': ()}"),
       "x.npy: header at byte 20: 'descr' is '<f16' (a float size numpy has but plumb does not read); plumb reads "
       "numeric arrays only"},
      {npy_bytes("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': ()}"),
       "x.npy: header at byte 20: 'descr' is '<M8[ns]' (datetimes); plumb reads numeric arrays only"},
      {npy_bytes("{'descr': '<\x01\xc3\xa4', 'fortran_order': False, 'shape': ()}"),
       "x.npy: header at byte 20: 'descr' is '<\\x01\\xc3\\xa4' (a type numpy does not write); plumb reads numeric "
       "arrays only"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (\x7f,)}"),
       "x.npy: header at byte 61: expected a Python literal (a string, a number, True, False, None, a tuple, a list "
       "or a dict), found '\\x7f'"},
      {npy_bytes("{'descr': 4, 'fortran_order': False, 'shape': ()}"),
       "x.npy: header at byte 20: 'descr' is not a string; plumb reads numeric arrays only"},
      {npy_bytes("{" + f4 + ", 'shape': (4611686018427387904, 8)}"),
       "x.npy: data ends at byte 128; the header's shape [4611686018427387904, 8] of float32 needs more than 2^64 "
       "bytes from byte 128"},
      {npy_bytes("{" + f4 + ", 'shape': (3,)}", "12345678"),
       "x.npy: data ends at byte 136; the header's shape [3] of float32 needs 12 bytes from byte 128"},
  };
  for (const auto& [bytes, message] : cases) EXPECT_EQ(read_error(bytes), message);
}

}  // namespace
}  // namespace plumb::precision
