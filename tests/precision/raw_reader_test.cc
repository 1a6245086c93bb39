// Raw .bin/.raw with --dtype and --shape, and the format table: which reader a file gets by its
// first bytes, --dtype, or its extension.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

#include "common/error.h"
#include "mem/input.h"
#include "precision/readers.h"

namespace plumb::precision {
namespace {

std::string write_tmp(const std::string& name, const std::string& bytes) {
  const std::string path = std::string(PLUMB_TEST_TMP) + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string floats(std::initializer_list<float> values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

std::string error_of(const std::string& path, const ReadOptions& options) {
  try {
    read_tensors(path, options);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "no error";
}

TEST(RawReader, DtypeAndShapeGiveTheTensorMappedNotCopied) {
  const std::string path = write_tmp("six.bin", floats({1.5f, -2.0f, 0.25f, 8.0f, -0.5f, 3.0f}));
  const mem::InputBytes input = mem::load_input(path);
  const Tensor t = read_raw(input, {DType::kFloat32, std::vector<int64_t>{2, 3}})[0];
  EXPECT_EQ(t.name, path);
  EXPECT_EQ(t.dtype, DType::kFloat32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.data, reinterpret_cast<const std::byte*>(input.bytes().data()));
  EXPECT_EQ(t.owner, input.owner());
  float last;
  std::memcpy(&last, t.data + 20, 4);
  EXPECT_EQ(last, 3.0f);
}

TEST(RawReader, WithoutAShapeOneDimensionOfTheFileSize) {
  const std::string path = write_tmp("halves.raw", std::string("\x00\x3c\x00\xc0\xff\x7b", 6));  // 1, -2, 65504
  const Tensor t = read_tensors(path, {DType::kFloat16, std::nullopt})[0];
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3}));
  uint16_t bits;
  std::memcpy(&bits, t.data + 4, 2);
  EXPECT_EQ(half_to_double(bits), 65504.0);
}

TEST(RawReader, EachMismatchHasItsOwnMessage) {
  const std::string path = write_tmp("ten.bin", std::string(10, '\0'));
  EXPECT_EQ(error_of(path, {}), path + ": raw data needs --dtype (and --shape, else one dimension of the file's size)");
  EXPECT_EQ(error_of(path, {DType::kFloat32, std::nullopt}),
            path + ": 10 bytes is not a whole number of float32 elements (4 bytes each)");
  EXPECT_EQ(error_of(path, {DType::kFloat32, std::vector<int64_t>{2, 2}}),
            path + ": 10 bytes, but --shape [2, 2] of float32 needs 16");
  EXPECT_EQ(error_of(path, {DType::kInt8, std::vector<int64_t>{5, -2}}), path + ": --shape [5, -2] has a negative size");
  EXPECT_EQ(error_of(path, {DType::kInt8, std::vector<int64_t>{int64_t{1} << 62, 8}}),
            path + ": 10 bytes, but --shape [4611686018427387904, 8] of int8 needs more than 2^64");
  const Tensor bytes = read_tensors(path, {DType::kUInt8, std::vector<int64_t>{2, 5}})[0];
  EXPECT_EQ(bytes.elements(), 10u);
}

TEST(RawReader, AnEmptyFileIsAZeroSizeTensor) {
  const std::string path = write_tmp("empty.bin", "");
  const Tensor t = read_tensors(path, {DType::kFloat64, std::nullopt})[0];
  EXPECT_EQ(t.shape, (std::vector<int64_t>{0}));
  EXPECT_EQ(t.bytes(), 0u);
}

const Format& format_for(const std::string& bytes, const std::string& name, const ReadOptions& options = {}) {
  return format_of(mem::input_from_string(bytes, name), options);  // an entry of the static table
}

TEST(FormatOf, FirstBytesThenDtypeThenExtension) {
  const std::string npy = "\x93NUMPY\x01\x00";
  const std::string zip = "PK\x03\x04rest";
  const std::string legacy = std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14) + "rest";
  const std::string safetensors = std::string("\x02\x00\x00\x00\x00\x00\x00\x00{}", 10);
  EXPECT_EQ(format_for(npy, "x.bin").name, "npy");
  EXPECT_EQ(format_for(npy, "x.dat", {DType::kFloat32, std::nullopt}).name, "npy");
  EXPECT_EQ(format_for(zip, "pytorch_model.bin").name, "pt");
  const std::string npz("PK\x03\x04\x14\x00\x00\x00\x00\x00\x00\x00\x21\x00\x6e\x99\xb2\x28\x90\x00\x00\x00"
                        "\x90\x00\x00\x00\x05\x00\x14\x00" "a.npy", 35);  // numpy.savez(f, a=np.zeros(2))
  EXPECT_EQ(format_for(npz, "x.npz").name, "npz");
  EXPECT_EQ(format_for(npz.substr(0, 34), "x.npz").name, "pt");  // the name cut short: a zip, no more
  const std::string archive = std::string(PLUMB_TEST_TMP) + "/x.npz";
  std::ofstream(archive, std::ios::binary) << npz;
  EXPECT_EQ(error_of(archive, {}), archive + ": a .npz archive (numpy.savez); plumb reads the .npy files in it: "
                                              "extract them first (python3 -m zipfile -e " + archive +
                                              " DIR) and compare the directories");
  EXPECT_EQ(format_for(legacy, "old.pt").name, "pt");
  EXPECT_EQ(format_for(safetensors, "model").name, "safetensors");
  // A length that does not fit the file is no safetensors header: raw data that happens to start so.
  EXPECT_EQ(format_for(std::string("\x03\x00\x00\x00\x00\x00\x00\x00{}", 10), "x.bin").name, "raw");
  EXPECT_EQ(format_for("1234", "x.dat", {DType::kFloat32, std::nullopt}).name, "raw");
  EXPECT_EQ(format_for("1234", "x.NPY").name, "npy");  // its reader names what is wrong
  EXPECT_EQ(format_for("1234", "x.pth").name, "pt");
  EXPECT_EQ(format_for("1234", "x.safetensors").name, "safetensors");
  EXPECT_EQ(format_for("1234", "x.raw").name, "raw");
  try {
    format_for("1234", "x.dat");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "x.dat: not a tensor file this reader knows (.npy, .pt, .safetensors; raw data needs --dtype)");
  }
}

TEST(FormatOf, ReadTensorsNamesTheReadersProblem) {
  const std::string npy = write_tmp("bad.npy", "1234");
  EXPECT_EQ(error_of(npy, {}), npy + ": not a .npy file: it does not start with \\x93NUMPY");
  const std::string missing = std::string(PLUMB_TEST_TMP) + "/no-such.npy";
  EXPECT_EQ(error_of(missing, {}), missing + ": cannot read: No such file or directory");
  const std::string empty = write_tmp("empty.safetensors", "");
  EXPECT_EQ(error_of(empty, {}), empty + ": ends at byte 0, inside the 8-byte header length");
}

}  // namespace
}  // namespace plumb::precision
