// .safetensors (https://github.com/huggingface/safetensors, README "Format"): 8 bytes, N, the
// header's length as a little-endian u64; N bytes of UTF-8 JSON, {"NAME": {"dtype": "F16",
// "shape": [1, 16, 256], "data_offsets": [BEGIN, END]}, ..., "__metadata__": {...}}, where the
// offsets count from the start of the byte buffer that fills the rest of the file, END one past
// the tensor's last byte. Little-endian, C order, no strides. The reference reader (the safetensors
// crate's SafeTensors::deserialize) also refuses headers over 100 MB, duplicate names, and a byte
// buffer with overlaps, holes or bytes after the last tensor; so does this one.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <string>

#include "common/error.h"
#include "common/json.h"
#include "precision/readers.h"

namespace plumb::precision {
namespace {

using nlohmann::json;

constexpr size_t kLengthBytes = 8;
constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the crate's MAX_HEADER_SIZE
constexpr std::string_view kMetadataKey = "__metadata__";

struct SafetensorsType {
  std::string_view name;
  DType dtype;
};
constexpr SafetensorsType kTypes[] = {
    {"BOOL", DType::kBool},    {"U8", DType::kUInt8},     {"I8", DType::kInt8},        {"I16", DType::kInt16},
    {"U16", DType::kUInt16},   {"I32", DType::kInt32},    {"U32", DType::kUInt32},     {"I64", DType::kInt64},
    {"U64", DType::kUInt64},   {"F16", DType::kFloat16},  {"BF16", DType::kBFloat16},  {"F32", DType::kFloat32},
    {"F64", DType::kFloat64},  {"C64", DType::kComplex64},
};
constexpr std::string_view kReadTypes = "BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, C64";

// The crate's other dtypes, named in the message.
std::string_view unread_type(std::string_view name) {
  if (name.starts_with("F8_")) return " (an 8-bit float)";
  if (name.starts_with("F6_")) return " (a 6-bit float)";
  if (name == "F4") return " (a 4-bit float)";
  return "";
}

struct Entry {
  std::string key;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin;
  uint64_t end;
};

// A header value for a message: short values as JSON, a nested or long one by its kind (never a
// recursive dump of whatever a file nests).
std::string json_kind_text(const json& value) {
  constexpr size_t kShort = 60;
  const bool flat = value.is_primitive() ||
                    (value.is_array() && std::all_of(value.begin(), value.end(), [](const json& v) {
                      return v.is_primitive();
                    }));
  if (flat) {
    std::string text = value.dump(-1, ' ', true, json::error_handler_t::replace);
    if (text.size() <= kShort) return text;
  }
  return value.is_array() ? "a list" : value.is_object() ? "an object" : "a long string";
}

class HeaderReader {
 public:
  explicit HeaderReader(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: header at byte {}: {}", path_, kLengthBytes, what));
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    fail(fmt::format("tensor '{}': {}", key, what));
  }

  json parse(std::string_view text) const {
    if (text.empty() || text[0] != '{') {
      throw Error(fmt::format("{}: header at byte {}: expected '{{' (a JSON object), found {}", path_, kLengthBytes,
                              text.empty() ? std::string("the header's end") : fmt::format("byte 0x{:02x}",
                                                                                       static_cast<uint8_t>(text[0]))));
    }
    // Checked first: nlohmann builds any depth, but a deep value's copy or dump recurses per level.
    if (const std::optional<size_t> at = json_depth_exceeded(text)) {
      fail(fmt::format("JSON nested deeper than {} levels (at byte {})", kMaxJsonDepth, kLengthBytes + *at));
    }
    std::set<std::string> seen;
    const auto no_duplicates = [&](int depth, json::parse_event_t event, json& parsed) {
      if (depth == 1 && event == json::parse_event_t::key && !seen.insert(parsed.get<std::string>()).second) {
        fail(fmt::format("the name '{}' appears twice; safetensors allows each name once", parsed.get<std::string>()));
      }
      return true;
    };
    try {
      return json::parse(text, no_duplicates);
    } catch (const json::parse_error& e) {
      std::string reason = e.what();
      const size_t column = reason.find("column ");
      const size_t colon = column == std::string::npos ? column : reason.find(": ", column);
      if (colon != std::string::npos) reason.erase(0, colon + 2);
      // The lexer's "last read" may hold any bytes of the file: left out of a one-line message.
      const size_t last_read = reason.find("; last read: ");
      if (last_read != std::string::npos) reason.erase(last_read, reason.find("; expected", last_read) - last_read);
      throw Error(fmt::format("{}: header at byte {}: not valid JSON: {}", path_, kLengthBytes + e.byte - 1, reason));
    } catch (const json::out_of_range&) {
      // nlohmann's 406: "number overflow parsing '6e666'", thrown by the parser with no position.
      fail("not valid JSON: a number beyond a double's range");
    } catch (const json::exception& e) {  // none other is documented for parsing; named if it comes
      fail(fmt::format("not valid JSON: nlohmann::json error {}", e.id));
    }
  }

  Entry entry(const std::string& key, const json& value) const {
    if (!value.is_object()) fail(key, "not an object with 'dtype', 'shape' and 'data_offsets'");
    Entry out{key, dtype(key, field(key, value, "dtype")), shape(key, field(key, value, "shape")), 0, 0};
    const json& offsets = field(key, value, "data_offsets");
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned() || offsets[0].get<uint64_t>() > offsets[1].get<uint64_t>()) {
      fail(key, fmt::format("'data_offsets' is {}, not [begin, end] with begin <= end",
                            json_kind_text(offsets)));
    }
    out.begin = offsets[0].get<uint64_t>();
    out.end = offsets[1].get<uint64_t>();
    const std::optional<uint64_t> needed = checked_bytes(out.shape, out.dtype);
    if (!needed || *needed != out.end - out.begin) {
      fail(key, fmt::format("data_offsets [{}, {}] hold {} bytes; the shape {} of {} needs {}", out.begin, out.end,
                            out.end - out.begin, shape_text(out.shape), dtype_name(out.dtype),
                            needed ? std::to_string(*needed) : "more than 2^64"));
    }
    return out;
  }

 private:
  const json& field(const std::string& key, const json& value, const char* name) const {
    const auto found = value.find(name);
    if (found == value.end()) fail(key, fmt::format("no '{}'", name));
    return *found;
  }

  DType dtype(const std::string& key, const json& value) const {
    if (!value.is_string())
      fail(key, fmt::format("'dtype' is {}, not a name", json_kind_text(value)));
    const std::string name = value.get<std::string>();
    for (const SafetensorsType& type : kTypes) {
      if (type.name == name) return type.dtype;
    }
    const bool plain = name.size() <= 16 && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    fail(key, fmt::format("'dtype' is {}{}; plumb reads {}",
                          plain ? "'" + name + "'" : json_kind_text(value), unread_type(name),
                          kReadTypes));
  }

  std::vector<int64_t> shape(const std::string& key, const json& value) const {
    std::vector<int64_t> out;
    const bool sizes = value.is_array() && std::all_of(value.begin(), value.end(), [](const json& dim) {
      return dim.is_number_unsigned() && dim.get<uint64_t>() <= uint64_t{INT64_MAX};
    });
    if (!sizes) fail(key, fmt::format("'shape' is {}, not a list of sizes", json_kind_text(value)));
    for (const json& dim : value) out.push_back(static_cast<int64_t>(dim.get<uint64_t>()));
    return out;
  }

  const std::string& path_;
};

uint64_t header_length(std::string_view bytes, const std::string& path) {
  if (bytes.size() < kLengthBytes) {
    throw Error(fmt::format("{}: ends at byte {}, inside the 8-byte header length", path, bytes.size()));
  }
  uint64_t length = 0;
  for (size_t i = 0; i < kLengthBytes; ++i) length |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  if (length > kMaxHeaderBytes) {
    throw Error(fmt::format("{}: byte 0: the header is {} bytes long, more than safetensors' limit of {}", path,
                            length, kMaxHeaderBytes));
  }
  if (length > bytes.size() - kLengthBytes) {
    throw Error(fmt::format("{}: byte 0: the header is {} bytes long, but the file ends at byte {}", path, length,
                            bytes.size()));
  }
  return length;
}

// In offset order, every byte of the buffer in exactly one tensor.
void check_layout(const std::vector<Entry>& entries, uint64_t buffer_bytes, uint64_t buffer_at,
                  const HeaderReader& reader) {
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry& entry : entries) {
    if (entry.end > buffer_bytes) {
      reader.fail(entry.key, fmt::format("data_offsets [{}, {}] end past the byte buffer's {} bytes (from byte {} "
                                         "to the file's end)", entry.begin, entry.end, buffer_bytes, buffer_at));
    }
    if (entry.begin < covered) {
      reader.fail(entry.key, fmt::format("data_offsets [{}, {}] overlap those of tensor '{}', [{}, {}]", entry.begin,
                                         entry.end, previous->key, previous->begin, previous->end));
    }
    if (entry.begin > covered) {
      reader.fail(fmt::format("bytes [{}, {}) of the byte buffer belong to no tensor; safetensors packs tensors "
                              "without gaps", covered, entry.begin));
    }
    covered = entry.end;
    previous = &entry;
  }
  if (covered != buffer_bytes) {
    reader.fail(fmt::format("bytes [{}, {}) of the byte buffer belong to no tensor; safetensors packs tensors without "
                            "gaps", covered, buffer_bytes));
  }
}

}  // namespace

std::vector<Tensor> read_safetensors(const mem::InputBytes& input, const ReadOptions& /*options*/) {
  const std::string& path = input.name();
  const std::string_view bytes = input.bytes();
  const uint64_t length = header_length(bytes, path);
  const HeaderReader reader(path);
  const json header = reader.parse(bytes.substr(kLengthBytes, length));
  if (!header.is_object()) reader.fail("the header is not a JSON object");
  std::vector<Entry> entries;
  for (const auto& [key, value] : header.items()) {
    if (key != kMetadataKey) entries.push_back(reader.entry(key, value));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end, a.key) < std::tie(b.begin, b.end, b.key);
  });
  const size_t buffer_at = kLengthBytes + length;
  check_layout(entries, bytes.size() - buffer_at, buffer_at, reader);
  const auto* buffer = reinterpret_cast<const std::byte*>(bytes.data() + buffer_at);
  std::vector<Tensor> tensors;
  tensors.reserve(entries.size());
  for (Entry& entry : entries) {
    tensors.push_back(view_tensor(path + ":" + entry.key, entry.dtype, std::move(entry.shape), buffer + entry.begin,
                                  input.owner()));
  }
  return tensors;
}

}  // namespace plumb::precision
