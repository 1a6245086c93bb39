// .npy, as numpy.lib.format writes it (https://numpy.org/doc/stable/reference/generated/
// numpy.lib.format.html): the magic "\x93NUMPY", a major and a minor version byte, the header's
// length (2 bytes little-endian in version 1.0, 4 bytes in 2.0 and 3.0), then the header: a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and
// ended by '\n' (ASCII in 1.0 and 2.0, UTF-8 in 3.0), then the elements.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "precision/readers.h"

namespace plumb::precision {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kVersionAt = 6;   // major, minor
constexpr size_t kLengthAt = 8;    // the header's length
constexpr int kMaxNesting = 32;    // of the header's literal: deeper is no header numpy writes

// Bytes of the header as a message shows them: printable ASCII as is, others as \xNN.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out += byte >= 0x20 && byte < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", byte);
  }
  return out;
}

// One value of the header's Python literal.
struct Literal {
  enum class Kind { kString, kBool, kInt, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  size_t at = 0;                 // byte offset in the file
  std::string text;              // kString; kDict: the keys, in `keys`
  bool flag = false;             // kBool
  int64_t number = 0;            // kInt
  std::vector<Literal> items;    // kTuple, kList; kDict: the values
  std::vector<std::string> keys;  // kDict
};

// The subset of Python literals numpy's header uses (ast.literal_eval reads it in numpy): dicts,
// strings, True/False/None, integers (Python 2's 3L too), tuples and lists.
class LiteralParser {
 public:
  LiteralParser(std::string_view text, size_t base, const std::string& path)
      : text_(text), base_(base), path_(path) {}

  Literal header() {
    skip_space();
    if (peek() != '{') fail("expected '{' (a dict literal)");
    Literal dict = value(0);
    skip_space();
    if (pos_ != text_.size()) fail("expected the header's end after the dict");
    return dict;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    const std::string found = pos_ < text_.size() ? fmt::format("'{}'", printable(text_.substr(pos_, 1)))
                                                   : "the header's end";
    throw Error(fmt::format("{}: header at byte {}: {}, found {}", path_, base_ + pos_, what, found));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::string_view(" \t\r\n").find(text_[pos_]) != std::string_view::npos) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  Literal value(int depth) {
    if (depth > kMaxNesting) fail("nested too deeply");
    skip_space();
    Literal out;
    out.at = base_ + pos_;
    const char c = peek();
    if (c == '\'' || c == '"') {
      out.kind = Literal::Kind::kString;
      out.text = string();
    } else if (c == '{') {
      out.kind = Literal::Kind::kDict;
      dict(out, depth);
    } else if (c == '(' || c == '[') {
      out.kind = c == '(' ? Literal::Kind::kTuple : Literal::Kind::kList;
      sequence(out, c == '(' ? ')' : ']', depth);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      out.kind = Literal::Kind::kInt;
      out.number = integer();
    } else {
      word(out);
    }
    return out;
  }

  std::string string() {
    const char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_++];
    }
    if (pos_ == text_.size()) fail("expected the string's closing quote");
    ++pos_;
    return out;
  }

  int64_t integer() {
    const bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    if (peek() < '0' || peek() > '9') fail("expected a digit");
    uint64_t magnitude = 0;
    while (peek() >= '0' && peek() <= '9') {
      const auto digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (magnitude > (uint64_t{INT64_MAX} - digit) / 10) fail("expected an integer below 2^63");
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2's long, in headers numpy wrote then
    const auto value = static_cast<int64_t>(magnitude);
    return negative ? -value : value;
  }

  void word(Literal& out) {
    constexpr std::pair<std::string_view, int> kWords[] = {{"True", 1}, {"False", 0}, {"None", -1}};
    for (const auto& [name, flag] : kWords) {
      if (text_.substr(pos_, name.size()) == name) {
        pos_ += name.size();
        out.kind = flag < 0 ? Literal::Kind::kNone : Literal::Kind::kBool;
        out.flag = flag == 1;
        return;
      }
    }
    fail("expected a Python literal (a string, a number, True, False, None, a tuple, a list or a dict)");
  }

  void sequence(Literal& out, char close, int depth) {
    ++pos_;
    while (!take(close)) {
      out.items.push_back(value(depth + 1));
      if (take(close)) return;
      if (!take(',')) fail(fmt::format("expected ',' or '{}'", close));
    }
  }

  void dict(Literal& out, int depth) {
    ++pos_;
    while (!take('}')) {
      skip_space();
      if (peek() != '\'' && peek() != '"') fail("expected a key in quotes");
      out.keys.push_back(string());
      if (!take(':')) fail("expected ':'");
      out.items.push_back(value(depth + 1));
      if (take('}')) return;
      if (!take(',')) fail("expected ',' or '}'");
    }
  }

  std::string_view text_;
  size_t base_;
  const std::string& path_;
  size_t pos_ = 0;
};

// A numeric typestr's kind letter and size, as numpy's dtype.str writes them ('<f4', '|b1').
struct NpyType {
  char kind;
  int bytes;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {'b', 1, DType::kBool},       {'i', 1, DType::kInt8},       {'i', 2, DType::kInt16},
    {'i', 4, DType::kInt32},      {'i', 8, DType::kInt64},      {'u', 1, DType::kUInt8},
    {'u', 2, DType::kUInt16},     {'u', 4, DType::kUInt32},     {'u', 8, DType::kUInt64},
    {'f', 2, DType::kFloat16},    {'f', 4, DType::kFloat32},    {'f', 8, DType::kFloat64},
    {'c', 8, DType::kComplex64},  {'c', 16, DType::kComplex128},
};

// What the kinds plumb does not read hold, for the message.
std::string_view unread_kind(char kind) {
  constexpr std::pair<char, std::string_view> kKinds[] = {
      {'O', "an object array"},  {'V', "raw or structured records"}, {'S', "byte strings"},
      {'a', "byte strings"},     {'U', "unicode strings"},           {'M', "datetimes"},
      {'m', "timedeltas"},       {'f', "a float size numpy has but plumb does not read"},
      {'c', "a complex size numpy has but plumb does not read"},      {'i', "an unknown integer size"},
      {'u', "an unknown integer size"}, {'b', "an unknown bool size"},
  };
  for (const auto& [letter, what] : kKinds) {
    if (letter == kind) return what;
  }
  return "a type numpy does not write";
}

struct Descr {
  DType dtype;
  bool swap;  // the file's byte order is not this machine's
};

// '<' little-endian, '>' and '!' big-endian, '|' not applicable, '=' native; numpy's dtype.str
// writes '<', '>' or '|' (https://numpy.org/doc/stable/reference/arrays.interface.html, typestr).
Descr parse_descr(const Literal& descr, const std::string& path) {
  const auto refuse = [&](std::string_view what) {
    return Error(fmt::format("{}: header at byte {}: 'descr' is {}; plumb reads numeric arrays only", path,
                             descr.at, what));
  };
  if (descr.kind == Literal::Kind::kList) throw refuse("a list of fields (a structured array)");
  if (descr.kind != Literal::Kind::kString) throw refuse("not a string");
  std::string_view text = descr.text;
  char order = '=';
  if (!text.empty() && std::string_view("<>|=!").find(text[0]) != std::string_view::npos) {
    order = text[0];
    text.remove_prefix(1);
  }
  const char kind = text.empty() ? '\0' : text[0];
  const std::string size(text.empty() ? text : text.substr(1));
  for (const NpyType& type : kNpyTypes) {
    if (type.kind == kind && size == std::to_string(type.bytes)) {
      const bool big = order == '>' || order == '!';
      const bool little = order == '<';
      const bool native_big = std::endian::native == std::endian::big;
      return {type.dtype, type.bytes > 1 && ((big && !native_big) || (little && native_big))};
    }
  }
  throw refuse(fmt::format("'{}' ({})", printable(descr.text), unread_kind(kind)));
}

struct Header {
  Descr descr;
  bool fortran;
  std::vector<int64_t> shape;
};

std::vector<int64_t> parse_shape(const Literal& shape, const std::string& path) {
  if (shape.kind != Literal::Kind::kTuple) {
    throw Error(fmt::format("{}: header at byte {}: 'shape' is not a tuple of sizes", path, shape.at));
  }
  std::vector<int64_t> out;
  for (const Literal& dim : shape.items) {
    if (dim.kind != Literal::Kind::kInt || dim.number < 0) {
      throw Error(fmt::format("{}: header at byte {}: 'shape' holds {}, not a size", path, dim.at,
                              dim.kind == Literal::Kind::kInt ? std::to_string(dim.number) : "a non-integer"));
    }
    out.push_back(dim.number);
  }
  return out;
}

// The three keys numpy writes and requires (numpy.lib.format._read_array_header).
Header parse_header(const Literal& dict, size_t header_at, const std::string& path) {
  const Literal* descr = nullptr;
  const Literal* fortran = nullptr;
  const Literal* shape = nullptr;
  for (size_t i = 0; i < dict.keys.size(); ++i) {
    const std::string& key = dict.keys[i];
    const Literal* value = &dict.items[i];
    if (key == "descr") descr = value;
    else if (key == "fortran_order") fortran = value;
    else if (key == "shape") shape = value;
    else throw Error(fmt::format("{}: header at byte {}: unexpected key '{}'; a .npy header holds 'descr', "
                                 "'fortran_order' and 'shape'", path, value->at, printable(key)));
  }
  for (const auto& [found, key] : {std::pair{descr, "descr"}, {fortran, "fortran_order"}, {shape, "shape"}}) {
    if (found == nullptr) {
      throw Error(fmt::format("{}: header at byte {}: no '{}'; a .npy header holds 'descr', 'fortran_order' "
                              "and 'shape'", path, header_at, key));
    }
  }
  if (fortran->kind != Literal::Kind::kBool) {
    throw Error(fmt::format("{}: header at byte {}: 'fortran_order' is not True or False", path, fortran->at));
  }
  return {parse_descr(*descr, path), fortran->flag, parse_shape(*shape, path)};
}

struct Preamble {
  size_t header_at;
  size_t header_bytes;
};

Preamble read_preamble(std::string_view bytes, const std::string& path) {
  if (bytes.size() < kMagic.size() && !bytes.empty() && kMagic.starts_with(bytes)) {
    throw Error(fmt::format("{}: ends at byte {}, inside the .npy preamble (magic, version, header length)", path,
                            bytes.size()));
  }
  if (!bytes.starts_with(kMagic)) {
    throw Error(fmt::format("{}: not a .npy file: it does not start with \\x93NUMPY", path));
  }
  if (bytes.size() < kLengthAt + 2) {
    throw Error(fmt::format("{}: ends at byte {}, inside the .npy preamble (magic, version, header length)", path,
                            bytes.size()));
  }
  const auto major = static_cast<uint8_t>(bytes[kVersionAt]);
  const auto minor = static_cast<uint8_t>(bytes[kVersionAt + 1]);
  if (major < 1 || major > 3 || minor != 0) {
    throw Error(fmt::format("{}: byte {}: .npy format version {}.{}; plumb reads versions 1.0, 2.0 and 3.0", path,
                            kVersionAt, major, minor));
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < kLengthAt + length_bytes) {
    throw Error(fmt::format("{}: ends at byte {}, inside the .npy preamble (magic, version, header length)", path,
                            bytes.size()));
  }
  size_t length = 0;
  for (size_t i = 0; i < length_bytes; ++i) {
    length |= size_t{static_cast<uint8_t>(bytes[kLengthAt + i])} << (8 * i);
  }
  const size_t header_at = kLengthAt + length_bytes;
  if (length > bytes.size() - header_at) {
    throw Error(fmt::format("{}: byte {}: the header is {} bytes long, but the file ends at byte {}", path,
                            kLengthAt, length, bytes.size()));
  }
  return {header_at, length};
}

// Fortran order is C order when at most one dimension is longer than 1, or there is nothing.
bool fortran_is_c(const std::vector<int64_t>& shape) {
  return std::count_if(shape.begin(), shape.end(), [](int64_t d) { return d > 1; }) <= 1 ||
         std::find(shape.begin(), shape.end(), 0) != shape.end();
}

// A 2-D transpose of kSize-byte elements, dst[r × dst_row + c] = src[r + c × src_col] for r <
// rows, c < cols (in elements), in tiles, so that both sides stay in cache.
template <size_t kSize>
void transpose(std::byte* dst, size_t dst_row, const std::byte* src, size_t src_col, size_t rows, size_t cols) {
  constexpr size_t kTile = 32;
  for (size_t r0 = 0; r0 < rows; r0 += kTile) {
    const size_t r_end = std::min(rows, r0 + kTile);
    for (size_t c0 = 0; c0 < cols; c0 += kTile) {
      const size_t c_end = std::min(cols, c0 + kTile);
      for (size_t r = r0; r < r_end; ++r) {
        for (size_t c = c0; c < c_end; ++c) std::memcpy(dst + (r * dst_row + c) * kSize, src + (r + c * src_col) * kSize, kSize);
      }
    }
  }
}
using Transpose = void (*)(std::byte*, size_t, const std::byte*, size_t, size_t, size_t);

Transpose transpose_of(size_t size) {
  switch (size) {
    case 1: return transpose<1>;
    case 2: return transpose<2>;
    case 4: return transpose<4>;
    case 8: return transpose<8>;
    default: return transpose<16>;  // complex128, the only other size
  }
}

// Fortran order (the first index fastest) into C order (the last index fastest), for two or more
// dimensions: for each index of the middle dimensions, a 2-D transpose of the first and the last.
std::vector<std::byte> fortran_to_c(const std::byte* src, const std::vector<int64_t>& shape, size_t size) {
  const size_t n = shape.size();
  std::vector<size_t> stride(n);  // of the source, in elements
  size_t total = 1;
  for (size_t i = 0; i < n; ++i) {
    stride[i] = total;
    total *= static_cast<size_t>(shape[i]);
  }
  const auto rows = static_cast<size_t>(shape[0]);
  const auto cols = static_cast<size_t>(shape[n - 1]);
  const size_t middle = total / rows / cols;
  std::vector<std::byte> out(total * size);
  const Transpose slab = transpose_of(size);
  std::vector<int64_t> index(n, 0);  // of the middle dimensions, 1 … n-2
  for (size_t m = 0; m < middle; ++m) {
    size_t from = 0;
    for (size_t i = 1; i + 1 < n; ++i) from += static_cast<size_t>(index[i]) * stride[i];
    slab(out.data() + m * cols * size, middle * cols, src + from * size, stride[n - 1], rows, cols);
    for (size_t i = n - 1; i-- > 1;) {  // the odometer over the middle dimensions, C order
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

template <typename U>
U byte_swapped(U v) {
  if constexpr (sizeof(U) == 2) return __builtin_bswap16(v);
  if constexpr (sizeof(U) == 4) return __builtin_bswap32(v);
  if constexpr (sizeof(U) == 8) return __builtin_bswap64(v);
}

template <typename U>
void swap_each(std::vector<std::byte>& bytes) {
  for (size_t at = 0; at + sizeof(U) <= bytes.size(); at += sizeof(U)) {
    U v;
    std::memcpy(&v, &bytes[at], sizeof v);
    v = byte_swapped(v);
    std::memcpy(&bytes[at], &v, sizeof v);
  }
}

// Reverses the bytes of each `unit` (the element, or each half of a complex one): 2, 4 or 8.
void swap_units(std::vector<std::byte>& bytes, size_t unit) {
  if (unit == 2) swap_each<uint16_t>(bytes);
  if (unit == 4) swap_each<uint32_t>(bytes);
  if (unit == 8) swap_each<uint64_t>(bytes);
}

}  // namespace

std::vector<Tensor> read_npy(const mem::InputBytes& input, const ReadOptions& /*options*/) {
  const std::string& path = input.name();
  const std::string_view bytes = input.bytes();
  const Preamble preamble = read_preamble(bytes, path);
  LiteralParser parser(bytes.substr(preamble.header_at, preamble.header_bytes), preamble.header_at, path);
  const Header header = parse_header(parser.header(), preamble.header_at, path);
  const std::optional<uint64_t> needed = checked_bytes(header.shape, header.descr.dtype);
  const size_t data_at = preamble.header_at + preamble.header_bytes;
  if (!needed || *needed > bytes.size() - data_at) {
    throw Error(fmt::format("{}: data ends at byte {}; the header's shape {} of {} needs {} bytes from byte {}",
                            path, bytes.size(), shape_text(header.shape), dtype_name(header.descr.dtype),
                            needed ? std::to_string(*needed) : "more than 2^64", data_at));
  }
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data() + data_at);
  const bool c_order = !header.fortran || fortran_is_c(header.shape);
  if (c_order && !header.descr.swap) {
    return {view_tensor(path, header.descr.dtype, header.shape, data, input.owner())};
  }
  const DTypeInfo& info = dtype_info(header.descr.dtype);
  std::vector<std::byte> native = c_order ? std::vector<std::byte>(data, data + *needed)
                                          : fortran_to_c(data, header.shape, info.bytes);
  if (header.descr.swap) swap_units(native, info.kind == DKind::kComplex ? info.bytes / 2u : info.bytes);
  return {owned_tensor(path, header.descr.dtype, header.shape, std::move(native))};
}

}  // namespace plumb::precision
