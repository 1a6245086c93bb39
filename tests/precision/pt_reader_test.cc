// The .pt reader against files built byte for byte as torch.save writes them
// (tests/fixtures/precision/pt/make_pt.py, standard library only), one of them checked byte by
// byte below as a worked example; a malicious data.pkl refused with nothing run; each bad input's
// one line. Also the restricted reading of src/mem's pickle reader that it rests on.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.h"
#include "mem/input.h"
#include "mem/pickle.h"
#include "precision/readers.h"
#include "precision/zip_reader.h"

namespace plumb::precision {
namespace {

const std::string kDir = PLUMB_TEST_FIXTURES "/precision/pt/";

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<Tensor> read(const std::string& file) { return read_pt(mem::load_input(kDir + file), {}); }

template <typename T>
std::vector<T> values(const Tensor& t) {
  EXPECT_EQ(sizeof(T), dtype_info(t.dtype).bytes);
  std::vector<T> out(t.elements());
  if (!out.empty()) std::memcpy(out.data(), t.data, t.bytes());
  return out;
}

std::vector<double> halves(const Tensor& t, double (*widen)(uint16_t)) {
  std::vector<double> out;
  for (const uint16_t bits : values<uint16_t>(t)) out.push_back(widen(bits));
  return out;
}

std::string error_of(const std::string& bytes, const std::string& name) {
  try {
    read_pt(mem::input_from_string(bytes, name), {});
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string error_of_file(const std::string& file) {
  try {
    read(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// ---- worked example: the bytes of float32_2d.pt (make_pt.py), as torch.save lays them out

TEST(PtFixture, Float32TwoDimensionalBytesAreTorchSaveLayout) {
  const std::string bytes = file_bytes(kDir + "float32_2d.pt");
  const ZipArchive zip(bytes, nullptr, "float32_2d.pt");
  std::vector<std::string> names;
  for (const ZipEntry& e : zip.entries()) names.push_back(e.name);
  // torch.save to a path: every record under the file's stem.
  EXPECT_EQ(names, (std::vector<std::string>{"float32_2d/data.pkl", "float32_2d/byteorder", "float32_2d/data/0",
                                             "float32_2d/version", "float32_2d/.data/serialization_id"}));
  for (const ZipEntry& e : zip.entries()) EXPECT_EQ(e.method, 0) << e.name;  // stored
  // The storage: 6 little-endian float32 on a 64-byte boundary (the writer pads the local
  // header's extra field, 'FB' + length + 'Z's). 1.5f = 0x3fc00000, -2.0f = 0xc0000000.
  const ZipData storage = zip.read(*zip.find("float32_2d/data/0"));
  EXPECT_EQ(storage.offset, 384u);
  EXPECT_EQ(storage.offset % 64, 0u);
  EXPECT_EQ(storage.bytes.substr(0, 8), std::string_view("\x00\x00\xc0\x3f\x00\x00\x00\xc0", 8));
  EXPECT_EQ(zip.read(*zip.find("float32_2d/byteorder")).bytes, "little");
  // data.pkl, protocol 2 (torch's DEFAULT_PROTOCOL), opcode by opcode as pickletools.dis shows it.
  const std::string_view pkl = zip.read(*zip.find("float32_2d/data.pkl")).bytes;
  ASSERT_EQ(pkl.size(), 154u);
  EXPECT_EQ(pkl.substr(0, 2), "\x80\x02");                                      // PROTO 2
  EXPECT_EQ(pkl.substr(2, 35), std::string_view("ctorch._utils\n_rebuild_tensor_v2\nq\x00", 35));  // GLOBAL, BINPUT 0
  EXPECT_EQ(pkl.substr(37, 2), "((");                                           // MARK (args), MARK (pid)
  EXPECT_EQ(pkl.substr(39, 12), std::string_view("X\x07\x00\x00\x00storage", 12));  // 'storage'
  EXPECT_EQ(pkl.substr(53, 20), "ctorch\nFloatStorage\n");                      // the storage type
  EXPECT_EQ(pkl.substr(75, 6), std::string_view("X\x01\x00\x00\x00" "0", 6));   // key '0'
  EXPECT_EQ(pkl.substr(83, 8), std::string_view("X\x03\x00\x00\x00" "cpu", 8));  // location
  EXPECT_EQ(pkl.substr(93, 3), "K\x06t");                                       // numel 6, TUPLE
  EXPECT_EQ(pkl[98], 'Q');                                                      // BINPERSID
  EXPECT_EQ(pkl.substr(99, 2), std::string_view("K\x00", 2));                   // storage_offset 0
  EXPECT_EQ(pkl.substr(101, 5), "K\x02K\x03\x86");                              // size (2, 3)
  EXPECT_EQ(pkl.substr(108, 5), "K\x03K\x01\x86");                              // stride (3, 1)
  EXPECT_EQ(pkl[115], '\x89');                                                  // requires_grad False
  EXPECT_EQ(pkl.substr(116, 25), "ccollections\nOrderedDict\n");                // backward_hooks
  EXPECT_EQ(pkl.substr(143, 2), ")R");                                          // OrderedDict()
  EXPECT_EQ(pkl[147], 't');                                                     // the 6 arguments
  EXPECT_EQ(pkl[150], 'R');                                                     // _rebuild_tensor_v2(...)
  EXPECT_EQ(pkl[153], '.');                                                     // STOP
}

// ---- tensors

TEST(PtReader, Float32TwoDimensionalIsAViewOfTheMapping) {
  const mem::InputBytes input = mem::load_input(kDir + "float32_2d.pt");
  const std::vector<Tensor> tensors = read_pt(input, {});
  ASSERT_EQ(tensors.size(), 1u);
  const Tensor& t = tensors[0];
  EXPECT_EQ(t.name, kDir + "float32_2d.pt");
  EXPECT_EQ(t.dtype, DType::kFloat32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(t), (std::vector<float>{1.5f, -2.0f, 3.0f, 4.0f, 5.25f, -6.0f}));
  // No copy: the storage's bytes in the file, at byte 384.
  EXPECT_EQ(reinterpret_cast<const char*>(t.data), input.bytes().data() + 384);
}

TEST(PtReader, Float16) {
  const Tensor t = read("float16.pt").at(0);
  EXPECT_EQ(t.dtype, DType::kFloat16);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(halves(t, half_to_double), (std::vector<double>{1.0, 0.5, -2.0, 65504.0}));
}

TEST(PtReader, BFloat16) {
  const Tensor t = read("bfloat16.pt").at(0);
  EXPECT_EQ(t.dtype, DType::kBFloat16);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(halves(t, bfloat16_to_double), (std::vector<double>{1.0, -2.5, 0.15625, 256.0}));
}

TEST(PtReader, Int64) {
  const Tensor t = read("int64.pt").at(0);
  EXPECT_EQ(t.dtype, DType::kInt64);
  EXPECT_EQ(values<int64_t>(t), (std::vector<int64_t>{0, -1, int64_t{1} << 40, -(int64_t{1} << 62)}));
}

TEST(PtReader, Bool) {
  const Tensor t = read("bool.pt").at(0);
  EXPECT_EQ(t.dtype, DType::kBool);
  EXPECT_EQ(values<uint8_t>(t), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(PtReader, TransposedSliceIsCopiedIntoCOrder) {
  // arange(12).reshape(3, 4)[:, 1:3].t(): offset 1, shape (2, 3), strides (1, 4).
  const Tensor t = read("view.pt").at(0);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(t), (std::vector<float>{1, 5, 9, 2, 6, 10}));
}

TEST(PtReader, ExpandedViewRepeatsItsElement) {
  const Tensor t = read("expanded.pt").at(0);  // x.expand(4, 3): strides (0, 0)
  EXPECT_EQ(t.shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(values<float>(t), std::vector<float>(12, 2.5f));
}

TEST(PtReader, StateDictWithTwoTensorsSharingAStorage) {
  const mem::InputBytes input = mem::load_input(kDir + "shared.pt");
  const std::vector<Tensor> tensors = read_pt(input, {});
  ASSERT_EQ(tensors.size(), 2u);  // "step": 7 is not a tensor
  EXPECT_EQ(tensors[0].name, kDir + "shared.pt:weight");  // an nn.Parameter
  EXPECT_EQ(tensors[0].shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values<float>(tensors[0]), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(tensors[1].name, kDir + "shared.pt:bias");
  EXPECT_EQ(values<float>(tensors[1]), (std::vector<float>{8, 9, 10, 11}));
  // One storage in the file, both views of it.
  EXPECT_EQ(tensors[1].data, tensors[0].data + 8 * sizeof(float));
}

TEST(PtReader, NestedDictsAndListsAreNamedByTheirPath) {
  const std::vector<Tensor> tensors = read("nested.pt");
  ASSERT_EQ(tensors.size(), 3u);  // "name": "run-1" skipped
  EXPECT_EQ(tensors[0].name, kDir + "nested.pt:model.layer.w");
  EXPECT_EQ(values<double>(tensors[0]), (std::vector<double>{0.25, -0.5}));
  EXPECT_EQ(tensors[1].name, kDir + "nested.pt:outs.0");
  EXPECT_TRUE(tensors[1].shape.empty());  // a scalar
  EXPECT_EQ(values<int32_t>(tensors[1]), (std::vector<int32_t>{7}));
  EXPECT_EQ(tensors[2].name, kDir + "nested.pt:outs.1");
  EXPECT_EQ(values<float>(tensors[2]), (std::vector<float>{2.5f, 3.5f}));
}

TEST(PtReader, BigEndianStoragesAreSwapped) {
  const Tensor t = read("big_endian.pt").at(0);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<float>(t), (std::vector<float>{1.5f, -2.0f, 3.25f, 1e-3f}));
}

TEST(PtReader, BigEndianViewsAreGatheredThenSwapped) {
  const std::vector<Tensor> tensors = read("views_big_endian.pt");
  ASSERT_EQ(tensors.size(), 2u);
  // arange(24).reshape(2, 3, 4).permute(2, 0, 1): element [i][j][k] is base[j][k][i] = 12j + 4k + i.
  EXPECT_EQ(tensors[0].shape, (std::vector<int64_t>{4, 2, 3}));
  std::vector<int16_t> expected;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 3; ++k) expected.push_back(static_cast<int16_t>(12 * j + 4 * k + i));
    }
  }
  EXPECT_EQ(values<int16_t>(tensors[0]), expected);
  EXPECT_TRUE(tensors[1].shape.empty());
  EXPECT_EQ(values<int16_t>(tensors[1]), (std::vector<int16_t>{5}));
}

TEST(PtReader, DeflatedEntryIsInflated) {
  const Tensor t = read("deflated.pt").at(0);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(values<float>(t), std::vector<float>(64, 1.0f));
}

TEST(PtReader, Zip64DirectoryAndExtraFields) {
  const Tensor t = read("zip64.pt").at(0);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(t), (std::vector<float>{1.5f, -2.0f, 3.0f, 4.0f, 5.25f, -6.0f}));
}

// ---- refusals

TEST(PtReader, MaliciousGlobalIsRefusedAndNothingRuns) {
  const std::filesystem::path marker = "/tmp/plumb-precision-pt-evil-marker";
  std::filesystem::remove(marker);
  EXPECT_EQ(error_of_file("evil.pt"),
            kDir + "evil.pt: data.pkl: byte 2: GLOBAL 'os system' is not allowed (plumb reads tensors only: "
                   "torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter, "
                   "torch._utils._rebuild_parameter_with_state, collections.OrderedDict, torch.Size, "
                   "torch.FloatStorage, torch.HalfStorage, torch.BFloat16Storage, torch.DoubleStorage, "
                   "torch.LongStorage, torch.IntStorage, torch.ShortStorage, torch.CharStorage, "
                   "torch.ByteStorage, torch.BoolStorage, torch.ComplexFloatStorage, "
                   "torch.ComplexDoubleStorage)");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(PtReader, TruncatedZip) {
  const std::string bytes = file_bytes(kDir + "float32_2d.pt");
  EXPECT_EQ(error_of(bytes.substr(0, 700), "cut.pt"),
            "cut.pt: truncated zip (700 bytes): the end-of-central-directory record that ends every zip is missing");
  // 100 bytes gone from the middle: the end record survives and names a directory (at byte 680,
  // 534 bytes) that now runs past the end.
  std::string moved = bytes;
  moved.erase(700, 100);
  EXPECT_EQ(error_of(moved, "hole.pt"),
            "hole.pt: truncated zip: the central directory at byte 680 (534 bytes) runs past the end of "
            "the file (1136 bytes)");
}

TEST(PtReader, ByteorderNeitherLittleNorBig) {
  std::string bytes = file_bytes(kDir + "float32_2d.pt");
  bytes.replace(bytes.find("little"), 6, "middle");
  // The entry's CRC-32, in its local header and the central directory, made to match ("little"
  // 19e33d85, "middle" 9e801acf): the reader's own check is what is tested here.
  for (size_t at; (at = bytes.find("\x85\x3d\xe3\x19")) != std::string::npos;) bytes.replace(at, 4, "\xcf\x1a\x80\x9e");
  EXPECT_EQ(error_of(bytes, "x.pt"), "x.pt: 'float32_2d/byteorder' holds 6 bytes that are not 'little' or 'big'");
}

TEST(PtReader, CompressionMethodOtherThanDeflate) {
  std::string bytes = file_bytes(kDir + "float32_2d.pt");
  bytes[680 + 10] = 12;  // the first central directory header's method: bzip2
  EXPECT_EQ(error_of(bytes, "x.pt"),
            "x.pt: zip entry 'float32_2d/data.pkl' is compressed with method 12; plumb reads stored entries "
            "(as torch.save writes them) and deflated ones");
}

TEST(PtReader, NotAZip) {
  EXPECT_EQ(error_of("\x80\x02}q\x00.", "old.pt"),
            "old.pt: not a zip archive (torch.save writes one since torch 1.6; the older format is not read)");
}

TEST(PtReader, FormatBeforeTorch16) {
  EXPECT_EQ(error_of(std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15), "legacy.pt"),
            "legacy.pt: a torch.save file of the format before torch 1.6 (pickles, not a zip); plumb reads the zip "
            "format: load it and save it again with torch 1.6 or later");
}

TEST(PtReader, NestingTooDeep) {
  EXPECT_EQ(error_of_file("deep.pt"),
            kDir + "deep.pt: data.pkl nests containers more than 256 deep");
}

TEST(PtReader, MissingStorageEntry) {
  EXPECT_EQ(error_of_file("missing_storage.pt"),
            kDir + "missing_storage.pt: data.pkl names storage '0', and the zip has no entry 'archive/data/0'");
}

TEST(PtReader, StorageTooSmallForTheView) {
  EXPECT_EQ(error_of_file("short_storage.pt"),
            kDir + "short_storage.pt: the view (offset 2, shape [4, 4], strides [4, 1]) reaches past storage '0', "
                   "which holds 12 float32 elements");
}

TEST(PtReader, ExpandedViewBeyondTheCopyBudget) {
  EXPECT_EQ(error_of_file("expanded_huge.pt"),
            kDir + "expanded_huge.pt: the view (offset 0, shape [1048576, 1024], strides [0, 0]) repeats storage "
                   "'0' into 4294967296 bytes; plumb copies such views up to 16795200 bytes for this file (16 MiB and "
                   "16 times its size)");
}

// ---- zip entries checked against their local headers and CRC-32 (issue 28). Each case is
// float32_2d.pt (or deflated.pt) with a few bytes changed here; the byte offsets are those the
// worked example above shows: data.pkl's local header at 0, data/0's at 326 (its data at 384, 24
// bytes, CRC-32 68100c46), the central directory at 680.

// The byte offset of the central (`signature` "PK\x01\x02", name at +46) or local ("PK\x03\x04",
// name at +30) header of the entry `name`.
size_t header_of(const std::string& bytes, const std::string& name, bool central) {
  const std::string signature = central ? std::string("PK\x01\x02", 4) : std::string("PK\x03\x04", 4);
  const size_t name_at = central ? 46 : 30;
  for (size_t at = bytes.find(signature); at != std::string::npos; at = bytes.find(signature, at + 1)) {
    if (bytes.compare(at + name_at, name.size(), name) == 0) return at;
  }
  ADD_FAILURE() << "no header of " << name;
  return 0;
}

void put_le(std::string& bytes, size_t at, uint64_t value, int n) {
  for (int i = 0; i < n; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

const std::string kStorage = "float32_2d/data/0";

TEST(PtZipIntegrity, TheFixtureHeadersAreWhereTheMessagesSay) {
  const std::string bytes = file_bytes(kDir + "float32_2d.pt");
  EXPECT_EQ(header_of(bytes, "float32_2d/data.pkl", false), 0u);
  EXPECT_EQ(header_of(bytes, kStorage, false), 326u);
  EXPECT_EQ(bytes.find(std::string("PK\x01\x02", 4)), 680u);
}

// The central directory names data/0 but points at data.pkl's local header: without the check,
// data.pkl's first 24 bytes were read as the tensor.
TEST(PtZipIntegrity, CentralDirectoryPointingAtAnotherEntrysHeader) {
  std::string bytes = file_bytes(kDir + "float32_2d.pt");
  put_le(bytes, header_of(bytes, kStorage, true) + 42, 0, 4);
  EXPECT_EQ(error_of(bytes, "x.pt"),
            "x.pt: zip entry 'float32_2d/data/0': its local header at byte 0 names 'float32_2d/data.pkl': the "
            "central directory points at another entry's header");
}

TEST(PtZipIntegrity, LocalHeaderWithAnotherCompressionMethod) {
  std::string bytes = file_bytes(kDir + "float32_2d.pt");
  put_le(bytes, 326 + 8, 8, 2);
  EXPECT_EQ(error_of(bytes, "x.pt"),
            "x.pt: zip entry 'float32_2d/data/0': its local header at byte 326 gives compression method 8, the "
            "central directory 0");
}

TEST(PtZipIntegrity, LocalHeaderWithOtherSizes) {
  std::string bytes = file_bytes(kDir + "float32_2d.pt");
  const size_t central = header_of(bytes, kStorage, true);
  put_le(bytes, central + 20, 20, 4);  // compressed size
  put_le(bytes, central + 24, 20, 4);  // uncompressed size
  EXPECT_EQ(error_of(bytes, "x.pt"),
            "x.pt: zip entry 'float32_2d/data/0': its local header at byte 326 gives 24 bytes, 24 uncompressed, "
            "CRC-32 68100c46; the central directory 20, 20, 68100c46");
  std::string crc = file_bytes(kDir + "float32_2d.pt");
  put_le(crc, 326 + 14, 0x12345678, 4);
  EXPECT_EQ(error_of(crc, "y.pt"),
            "y.pt: zip entry 'float32_2d/data/0': its local header at byte 326 gives 24 bytes, 24 uncompressed, "
            "CRC-32 12345678; the central directory 24, 24, 68100c46");
}

TEST(PtZipIntegrity, DataRunningIntoTheCentralDirectory) {
  std::string bytes = file_bytes(kDir + "float32_2d.pt");
  const size_t central = header_of(bytes, kStorage, true);
  for (const size_t at : {size_t{326} + 18, size_t{326} + 22, central + 20, central + 24}) put_le(bytes, at, 400, 4);
  EXPECT_EQ(error_of(bytes, "x.pt"),
            "x.pt: zip entry 'float32_2d/data/0': its data (bytes 384 to 784) runs into the central directory at "
            "byte 680");
}

TEST(PtZipIntegrity, LocalHeaderRunningPastTheEnd) {
  std::string bytes = file_bytes(kDir + "float32_2d.pt");
  put_le(bytes, 326 + 26, 0xffff, 2);  // the name's length
  EXPECT_EQ(error_of(bytes, "x.pt"),
            "x.pt: truncated zip: the local header of entry 'float32_2d/data/0' at byte 326 runs past the end of the "
            "file (1236 bytes)");
}

TEST(PtZipIntegrity, DamagedStoredBytesFailTheirCrc) {
  std::string bytes = file_bytes(kDir + "float32_2d.pt");
  bytes[384] = static_cast<char>(bytes[384] ^ 0xff);  // the first float's low byte
  EXPECT_EQ(error_of(bytes, "x.pt"),
            "x.pt: zip entry 'float32_2d/data/0': its 24 bytes have CRC-32 61dd8917, and the zip records 68100c46: "
            "the entry is damaged");
}

TEST(PtZipIntegrity, DeflatedBytesAreCheckedOnceInflated) {
  std::string bytes = file_bytes(kDir + "deflated.pt");
  put_le(bytes, header_of(bytes, "archive/data/0", false) + 14, 0, 4);
  put_le(bytes, header_of(bytes, "archive/data/0", true) + 16, 0, 4);
  EXPECT_EQ(error_of(bytes, "d.pt"),
            "d.pt: zip entry 'archive/data/0': its 256 bytes have CRC-32 b68dcaa8, and the zip records 00000000: the "
            "entry is damaged");
}

// Bit 3 of the flags: the local header's CRC-32 and sizes are 0 and follow the data (a streaming
// writer); the central directory's are checked against the bytes.
TEST(PtZipIntegrity, DataDescriptorZerosInTheLocalHeaderAreAccepted) {
  std::string bytes = file_bytes(kDir + "float32_2d.pt");
  put_le(bytes, 326 + 6, 8, 2);
  for (const size_t at : {size_t{326} + 14, size_t{326} + 18, size_t{326} + 22}) put_le(bytes, at, 0, 4);
  const std::vector<Tensor> tensors = read_pt(mem::input_from_string(bytes, "dd.pt"), {});
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_EQ(values<float>(tensors[0]), (std::vector<float>{1.5f, -2.0f, 3.0f, 4.0f, 5.25f, -6.0f}));
  put_le(bytes, 326 + 18, 20, 4);  // only one of them 0: not a deferral
  EXPECT_EQ(error_of(bytes, "dd.pt"),
            "dd.pt: zip entry 'float32_2d/data/0': its local header at byte 326 gives 20 bytes, 0 uncompressed, "
            "CRC-32 00000000; the central directory 24, 24, 68100c46");
}

TEST(PtZipIntegrity, Zip64LocalHeaderWithoutItsExtraField) {
  std::string bytes = file_bytes(kDir + "zip64.pt");
  const size_t local = header_of(bytes, kStorage, false);
  put_le(bytes, local + 30 + kStorage.size(), 0x9999, 2);  // the ZIP64 extra field's id
  EXPECT_EQ(error_of(bytes, "z.pt"),
            "z.pt: zip entry 'float32_2d/data/0': its local header at byte 299 defers its sizes to a ZIP64 extra "
            "field that is not there");
}

TEST(PtZipIntegrity, LargeEntriesAreChecksummedInPartsWithTheSameResult) {
  // 130 MiB in two parts on threads, joined with crc32_combine: zlib's CRC-32 of the whole.
  std::string big(size_t{130} << 20, '\0');
  for (size_t i = 0; i < big.size(); i += 4093) big[i] = static_cast<char>(i * 2654435761u >> 24);
  EXPECT_EQ(zip_crc32(big), static_cast<uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(big.data()), big.size())));
  EXPECT_EQ(zip_crc32(""), 0u);
  EXPECT_EQ(zip_crc32("123456789"), 0xcbf43926u);  // the CRC-32 check value (APPNOTE 4.4.7, ISO 3309)
}

// ---- the restricted reading of src/mem's pickle reader

mem::PickleObjects test_objects() {
  return {{{"torch._utils", "_rebuild_tensor_v2", false}, {"collections", "OrderedDict", true}},
          "tensors only: test"};
}

std::string restricted_error(const std::string& pkl) {
  try {
    mem::parse_restricted_pickle(mem::input_from_string(pkl, "t.pkl"), test_objects());
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PickleRestricted, StackGlobalReduceAndPersistentId) {
  // Protocol 4: STACK_GLOBAL of two str, a call with (BINPERSID(7),), an OrderedDict filled by SETITEM.
  const std::string pkl = std::string("\x80\x04") + "\x8c\x0ctorch._utils\x8c\x12_rebuild_tensor_v2\x93" +
                          "K\x07Q\x85R" + "\x8c\x0b" "collections\x8c\x0bOrderedDict\x93)R" + "K\x01K\x02s" +
                          "\x86.";
  const mem::PickleDoc doc = mem::parse_restricted_pickle(mem::input_from_string(pkl, "t.pkl"), test_objects());
  const mem::Value root = doc.root();
  ASSERT_TRUE(root.is(mem::PickleKind::kTuple));
  const mem::Value call = root[0];
  ASSERT_TRUE(call.is(mem::PickleKind::kCall));
  EXPECT_EQ(call.call_function().global_index(), 0u);
  EXPECT_EQ(call.call_args()[0].persistent_id().as_int(), 7);
  ASSERT_TRUE(root[1].is(mem::PickleKind::kDict));  // OrderedDict() filled by SETITEM
  ASSERT_EQ(root[1].size(), 1u);
  EXPECT_EQ((*root[1].entries().begin()).key.as_int(), 1);
  EXPECT_EQ((*root[1].entries().begin()).value.as_int(), 2);
}

TEST(PickleRestricted, RefusesWhatTorchDoesNotWrite) {
  EXPECT_EQ(restricted_error("\x80\x02" "cbuiltins\neval\n."),
            "t.pkl: byte 2: GLOBAL 'builtins eval' is not allowed (plumb reads tensors only: test)");
  EXPECT_EQ(restricted_error("\x80\x02K\x01)R."),
            "t.pkl: byte 5: REDUCE calls a int; plumb calls only the globals it allows");
  EXPECT_EQ(restricted_error("\x80\x02]K\x01\x62."),
            "t.pkl: byte 5: BUILD sets the state of a list; plumb allows it only on a dict made by an allowed "
            "global (its attributes are dropped)");
  EXPECT_EQ(restricted_error("\x80\x02" "ccollections\nOrderedDict\nK\x01\x85R."),
            "t.pkl: byte 30: REDUCE calls collections.OrderedDict with arguments; plumb reads only the empty "
            "call that pickle writes before the items");
  EXPECT_EQ(restricted_error("\x80\x02\x81."),
            "t.pkl: byte 2: opcode NEWOBJ (0x81) builds a Python object; plumb reads tensors only: test");
}

TEST(PickleRestricted, DefaultReadingStillRefusesGlobals) {
  try {
    mem::parse_pickle(std::string_view("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n."), "d.pkl");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "d.pkl: byte 2: opcode GLOBAL (0x63) builds a Python object; plumb reads plain data only "
                 "(dicts, lists, numbers, strings)");
  }
}

}  // namespace
}  // namespace plumb::precision
