#include "precision/readers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::precision {
namespace {

// numpy.lib.format's MAGIC_PREFIX.
bool sniff_npy(std::string_view head) { return head.starts_with("\x93NUMPY"); }

constexpr std::string_view kZip = "PK\x03\x04";

// numpy.savez writes a zip whose entries are .npy files ("arr_0.npy", "a.npy"): the first local
// file header's name (its length at byte 26, the name at byte 30; PKWARE APPNOTE 4.3.7).
bool sniff_npz(std::string_view head) {
  constexpr size_t kNameLengthAt = 26;
  constexpr size_t kNameAt = 30;
  if (!head.starts_with(kZip) || head.size() < kNameAt) return false;
  const size_t length = static_cast<uint8_t>(head[kNameLengthAt]) | size_t{static_cast<uint8_t>(head[kNameLengthAt + 1])} << 8;
  return head.size() >= kNameAt + length && head.substr(kNameAt, length).ends_with(".npy");
}

std::vector<Tensor> refuse_npz(const mem::InputBytes& input, const ReadOptions& /*options*/) {
  throw Error(fmt::format("{}: a .npz archive (numpy.savez); plumb reads the .npy files in it: extract them first "
                          "(python3 -m zipfile -e {} DIR) and compare the directories", input.name(), input.name()));
}

// torch.save's zip container (PyTorch ≥ 1.6) begins with a zip local file header; the legacy
// format with the pickled magic number 0x1950a86a20f9469cfc6c (torch/serialization.py,
// MAGIC_NUMBER, pickled with protocol 2 as a LONG1). The pt reader says which it reads.
bool sniff_pt(std::string_view head) {
  constexpr std::string_view kLegacy = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";
  return head.starts_with(kZip) || head.starts_with(kLegacy);
}

// safetensors: an 8-byte little-endian header length that fits the file, then the JSON header's
// '{' (https://github.com/huggingface/safetensors, README "Format").
bool sniff_safetensors(std::string_view head) {
  constexpr size_t kLengthBytes = 8;
  if (head.size() <= kLengthBytes || head[kLengthBytes] != '{') return false;
  uint64_t length = 0;
  for (size_t i = 0; i < kLengthBytes; ++i) length |= uint64_t{static_cast<uint8_t>(head[i])} << (8 * i);
  return length <= head.size() - kLengthBytes;
}

bool sniff_never(std::string_view /*head*/) { return false; }

// Whether the path ends with one of the space-separated extensions.
bool has_extension(const std::string& path, std::string_view extensions) {
  const std::string name = to_lower(path);
  size_t at = 0;
  while (at < extensions.size()) {
    size_t end = extensions.find(' ', at);
    if (end == std::string_view::npos) end = extensions.size();
    if (name.ends_with(extensions.substr(at, end - at))) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

const std::vector<Format>& formats() {
  static const std::vector<Format> kFormats = {
      {"npy", ".npy", sniff_npy, read_npy},
      {"npz", ".npz", sniff_npz, refuse_npz},  // before pt: both are zips
      {"pt", ".pt .pth", sniff_pt, read_pt},
      {"safetensors", ".safetensors", sniff_safetensors, read_safetensors},
      {"raw", ".bin .raw", sniff_never, read_raw},
  };
  return kFormats;
}

// The first bytes decide; then --dtype makes any other file raw data; then the extension (so that
// a truncated .npy gets the .npy reader's message, and a .bin without --dtype the raw reader's).
const Format& format_of(const mem::InputBytes& input, const ReadOptions& options) {
  const std::vector<Format>& all = formats();
  for (const Format& format : all) {
    if (format.sniff(input.bytes())) return format;
  }
  const auto raw = std::find_if(all.begin(), all.end(), [](const Format& f) { return f.name == "raw"; });
  if (options.raw_dtype) return *raw;
  for (const Format& format : all) {
    if (has_extension(input.name(), format.extensions)) return format;
  }
  throw Error(fmt::format("{}: not a tensor file this reader knows (.npy, .pt, .safetensors; raw data needs --dtype)",
                          input.name()));
}

std::vector<Tensor> read_tensors(const std::string& path, const ReadOptions& options) {
  const mem::InputBytes input = mem::load_input(path);
  const Format& format = format_of(input, options);
  input.populate();  // every element is read: one call brings the pages in, not a fault per few
  return format.read(input, options);
}

}  // namespace plumb::precision
