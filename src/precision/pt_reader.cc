// .pt files written by torch.save since torch 1.6: a zip (zip_reader.h) whose entries sit under one
// directory, "<archive>/": data.pkl (the pickled object, protocol 2), data/<key> (each storage's
// raw bytes), byteorder ("little" or "big"; absent in files older than torch 1.13, which are
// little-endian) and version. Sources: torch/serialization.py (_save: the record names and the
// persistent id ('storage', storage_type, key, location, numel); _load: the archive prefix taken
// from the first entry), torch/_tensor.py (Tensor.__reduce_ex__ → torch._utils._rebuild_tensor_v2
// with (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])) and
// torch/_utils.py (_rebuild_tensor_v2, _rebuild_parameter, _rebuild_parameter_with_state).
//
// data.pkl goes through src/mem's pickle reader in its restricted reading (mem/pickle.h), with the
// globals below only, in the spirit of torch.load(weights_only=True); nothing is imported or
// called. The value tree is then walked: every tensor becomes a Tensor named "path" (the whole
// object), "path:key" (a dict's key), "path:a.b" (nested dicts), "path:0" (a list's item).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"
#include "mem/pickle.h"
#include "precision/readers.h"
#include "precision/zip_reader.h"

namespace plumb::precision {
namespace {

using mem::PickleKind;
using mem::Value;

// What a global of data.pkl makes.
enum class Make : uint8_t { kTensor, kParameter, kStorage, kDict, kOther };

struct Allowed {
  std::string_view module;
  std::string_view name;
  Make make;
  DType dtype = DType::kUInt8;  // a storage's element type
};

// The allow-list. Storage types: torch/storage.py's _dtype_to_storage_type_map.
constexpr Allowed kAllowed[] = {
    {"torch._utils", "_rebuild_tensor_v2", Make::kTensor},
    {"torch._utils", "_rebuild_parameter", Make::kParameter},
    {"torch._utils", "_rebuild_parameter_with_state", Make::kParameter},
    {"collections", "OrderedDict", Make::kDict},
    {"torch", "Size", Make::kOther},  // a saved torch.Size: a leaf plumb skips
    {"torch", "FloatStorage", Make::kStorage, DType::kFloat32},
    {"torch", "HalfStorage", Make::kStorage, DType::kFloat16},
    {"torch", "BFloat16Storage", Make::kStorage, DType::kBFloat16},
    {"torch", "DoubleStorage", Make::kStorage, DType::kFloat64},
    {"torch", "LongStorage", Make::kStorage, DType::kInt64},
    {"torch", "IntStorage", Make::kStorage, DType::kInt32},
    {"torch", "ShortStorage", Make::kStorage, DType::kInt16},
    {"torch", "CharStorage", Make::kStorage, DType::kInt8},
    {"torch", "ByteStorage", Make::kStorage, DType::kUInt8},
    {"torch", "BoolStorage", Make::kStorage, DType::kBool},
    {"torch", "ComplexFloatStorage", Make::kStorage, DType::kComplex64},
    {"torch", "ComplexDoubleStorage", Make::kStorage, DType::kComplex128},
};

const mem::PickleObjects& allowed_objects() {
  static const mem::PickleObjects objects = [] {
    mem::PickleObjects o;
    o.reads = "tensors only:";
    for (const Allowed& a : kAllowed) {
      o.globals.push_back({a.module, a.name, a.make == Make::kDict});
      o.reads += fmt::format("{} {}.{}", o.globals.size() == 1 ? "" : ",", a.module, a.name);
    }
    return o;
  }();
  return objects;
}

// How deep data.pkl's containers may nest: a state dict is 2 or 3 deep; the walk recurses.
constexpr size_t kMaxPickleDepth = 256;

// The copies of views that repeat their storage's elements may reach, together, this much plus
// this many times the file's size: beyond, a tiny file could ask for terabytes.
constexpr uint64_t kRepeatFloor = uint64_t{16} << 20;
constexpr uint64_t kRepeatPerFileByte = 16;

const Allowed& allowed(Value global) { return kAllowed[global.global_index()]; }

// One storage: its entry's bytes and element type.
struct Storage {
  std::string key;
  DType dtype;
  uint64_t elements;  // what the bytes hold
  const std::byte* data;
  std::shared_ptr<const void> owner;
};

class PtReader {
 public:
  explicit PtReader(const mem::InputBytes& input)
      : input_(input), zip_(input.bytes(), input.owner(), input.name()) {}

  std::vector<Tensor> read() {
    find_prefix();
    read_byteorder();
    const ZipEntry* pkl = zip_.find(prefix_ + "data.pkl");
    if (pkl == nullptr) {
      throw Error(fmt::format("{}: no '{}data.pkl' in the zip: not a file torch.save wrote",
                              input_.name(), prefix_));
    }
    const ZipData data = zip_.read(*pkl);
    const mem::InputBytes pickle(data.owner, data.bytes, input_.name() + ": data.pkl");
    const mem::PickleDoc doc = mem::parse_restricted_pickle(pickle, allowed_objects());
    walk(doc.root(), input_.name(), 0);
    return std::move(tensors_);
  }

 private:
  // torch's reader takes the archive's directory from its first entry (torch/serialization.py).
  void find_prefix() {
    if (zip_.entries().empty()) throw Error(fmt::format("{}: an empty zip, no data.pkl", input_.name()));
    const std::string& first = zip_.entries().front().name;
    const size_t slash = first.find('/');
    if (slash == std::string::npos) {
      throw Error(fmt::format("{}: zip entry '{}' is not inside a directory; torch.save puts every "
                              "entry under '<archive>/'",
                              input_.name(), first));
    }
    prefix_ = first.substr(0, slash + 1);
  }

  void read_byteorder() {
    const ZipEntry* entry = zip_.find(prefix_ + "byteorder");
    if (entry == nullptr) return;  // before torch 1.13: little-endian
    const ZipData data = zip_.read(*entry);  // keeps an inflated entry alive while it is read
    const std::string_view order = data.bytes;
    if (order != "little" && order != "big") {
      throw Error(fmt::format("{}: '{}byteorder' holds {} bytes that are not 'little' or 'big'",
                              input_.name(), prefix_, order.size()));
    }
    swap_ = (order == "big") != (std::endian::native == std::endian::big);
  }

  // ---- the value tree
  // `depth` counts the containers above v: 0 for the whole object, whose keys are "path:key".
  void walk(Value v, const std::string& name, size_t depth) {
    if (depth > kMaxPickleDepth) {
      fail(input_.name(),
           fmt::format("data.pkl nests containers more than {} deep", kMaxPickleDepth));
    }
    const auto child = [&](std::string_view key) {
      return fmt::format("{}{}{}", name, depth == 0 ? ":" : ".", key);
    };
    switch (v.kind()) {
      case PickleKind::kCall: return call(v, name, depth);
      case PickleKind::kDict:
        if (!visited_.insert(v.id()).second) return;  // a shared container: read once
        for (const auto& [key, value] : v.entries()) {
          if (key.is(PickleKind::kStr)) walk(value, child(key.as_str()), depth + 1);
          if (key.is(PickleKind::kInt)) walk(value, child(std::to_string(key.as_int())), depth + 1);
        }
        return;
      case PickleKind::kList:
      case PickleKind::kTuple: {
        if (!visited_.insert(v.id()).second) return;
        size_t index = 0;
        for (const Value item : v.items()) walk(item, child(std::to_string(index++)), depth + 1);
        return;
      }
      default: return;  // ints, strings, None, storages: not tensors
    }
  }

  void call(Value v, const std::string& name, size_t depth) {
    const Allowed& what = allowed(v.call_function());
    const Value args = v.call_args();
    if (what.make == Make::kParameter) {  // (tensor, requires_grad, hooks[, state])
      if (args.size() == 0) fail(name, fmt::format("{} has no arguments", what.name));
      return walk(args[0], name, depth + 1);
    }
    if (what.make != Make::kTensor) return;  // a torch.Size: not a tensor
    // A tensor reached twice (a memo reference) is rebuilt once and named each time.
    if (const auto it = rebuilt_.find(v.id()); it != rebuilt_.end()) {
      Tensor again = tensors_[it->second];
      again.name = name;
      tensors_.push_back(std::move(again));
      return;
    }
    tensors_.push_back(rebuild(args, name));
    rebuilt_.emplace(v.id(), tensors_.size() - 1);
  }

  [[noreturn]] static void fail(const std::string& name, std::string_view what) {
    throw Error(fmt::format("{}: {}", name, what));
  }

  // ---- _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks, ...)
  Tensor rebuild(Value args, const std::string& name);
  uint64_t check_view(const Storage& s, int64_t offset, const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& strides, const std::string& name);
  const Storage& storage(Value pid, const std::string& name);

  const mem::InputBytes& input_;
  ZipArchive zip_;
  std::string prefix_;  // "archive/"
  bool swap_ = false;   // the storages' byte order is not this machine's
  uint64_t repeated_ = 0;  // bytes of views that repeat storage elements, copied so far
  std::vector<Tensor> tensors_;
  std::unordered_set<mem::NodeId> visited_;           // dicts, lists and tuples walked
  std::unordered_map<mem::NodeId, size_t> rebuilt_;  // a tensor's call → its index in tensors_
  std::unordered_map<std::string, Storage> storages_;
};

// ---- storages and views

// A list of ints from a tuple (torch writes size and stride as tuples; a torch.Size call, from
// older writers, holds its tuple as the one argument).
std::vector<int64_t> ints_of(Value v, const std::string& name, std::string_view what) {
  if (v.is(PickleKind::kCall) && allowed(v.call_function()).name == "Size" && v.call_args().size() == 1) {
    v = v.call_args()[0];
  }
  if (!v.is(PickleKind::kTuple) && !v.is(PickleKind::kList)) {
    throw Error(fmt::format("{}: _rebuild_tensor_v2's {} is a {}, not a tuple of ints", name, what,
                            mem::kind_name(v.kind())));
  }
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (const Value item : v.items()) {
    if (!item.is(PickleKind::kInt) || item.as_int() < 0) {
      throw Error(fmt::format("{}: _rebuild_tensor_v2's {} holds {}, not a count", name, what,
                              item.is(PickleKind::kInt) ? std::to_string(item.as_int())
                                                        : fmt::format("a {}", mem::kind_name(item.kind()))));
    }
    out.push_back(item.as_int());
  }
  return out;
}

// The last element a view reaches: offset + Σ (size - 1) × stride; nullopt past 2^63.
std::optional<int64_t> last_element(int64_t offset, const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& strides) {
  int64_t last = offset;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t step = 0;
    if (__builtin_mul_overflow(shape[d] - 1, strides[d], &step) || __builtin_add_overflow(last, step, &last)) {
      return std::nullopt;
    }
  }
  return last;
}

// C order: each stride is the product of the sizes after it (dimensions of size 1 may have any).
bool c_contiguous(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

// One row of a view: n elements of Size bytes, `step` elements apart in the storage.
template <size_t Size>
void copy_row(std::byte* out, const std::byte* from, int64_t n, int64_t step) {
  for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * Size, from + j * step * static_cast<int64_t>(Size), Size);
}

using RowCopy = void (*)(std::byte*, const std::byte*, int64_t, int64_t);

RowCopy row_copy(size_t size) {
  switch (size) {
    case 1: return copy_row<1>;
    case 2: return copy_row<2>;
    case 4: return copy_row<4>;
    case 8: return copy_row<8>;
    default: return copy_row<16>;  // complex128, the widest type
  }
}

// The view's elements (at least one) in C order: row by row along the last dimension, an odometer
// over the others moving the source by each dimension's stride.
std::vector<std::byte> gather(const std::byte* storage, int64_t offset, const std::vector<int64_t>& shape,
                              const std::vector<int64_t>& strides, size_t size, uint64_t elements) {
  std::vector<std::byte> out(elements * size);
  const auto width = static_cast<int64_t>(size);
  if (shape.empty()) {
    std::memcpy(out.data(), storage + offset * width, size);
    return out;
  }
  const size_t last = shape.size() - 1;
  const int64_t n = shape[last];
  const RowCopy copy = row_copy(size);
  std::vector<int64_t> index(last, 0);
  int64_t at = offset;
  for (uint64_t row = 0; row < elements / static_cast<uint64_t>(n); ++row) {
    copy(out.data() + row * static_cast<uint64_t>(n) * size, storage + at * width, n, strides[last]);
    for (size_t d = last; d-- > 0;) {
      at += strides[d];
      if (++index[d] < shape[d]) break;
      at -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return out;
}

// Each number's bytes reversed (a complex number's two halves each on their own).
void swap_bytes(std::vector<std::byte>& bytes, DType dtype) {
  const DTypeInfo& info = dtype_info(dtype);
  const size_t width = info.kind == DKind::kComplex ? info.bytes / 2u : info.bytes;
  if (width == 1) return;
  for (size_t i = 0; i + width <= bytes.size(); i += width) {
    std::reverse(bytes.begin() + static_cast<ptrdiff_t>(i), bytes.begin() + static_cast<ptrdiff_t>(i + width));
  }
}

const Storage& PtReader::storage(Value pid, const std::string& name) {
  if (!pid.is(PickleKind::kPersistent)) {
    fail(name, fmt::format("_rebuild_tensor_v2's storage is a {}, not a persistent id (BINPERSID)",
                           mem::kind_name(pid.kind())));
  }
  const Value id = pid.persistent_id();
  if (!id.is(PickleKind::kTuple) || id.size() != 5 || !id[0].is(PickleKind::kStr) ||
      id[0].as_str() != "storage" || !id[1].is(PickleKind::kGlobal) || !id[2].is(PickleKind::kStr) ||
      !id[4].is(PickleKind::kInt)) {
    fail(name, "a persistent id that is not ('storage', storage_type, key, location, numel)");
  }
  const Allowed& type = allowed(id[1]);
  if (type.make != Make::kStorage) {
    fail(name, fmt::format("the persistent id's storage type is {}.{}, not a typed storage",
                           type.module, type.name));
  }
  const std::string key(id[2].as_str());
  if (const auto it = storages_.find(key); it != storages_.end()) {
    if (it->second.dtype != type.dtype) {
      fail(name, fmt::format("storage '{}' is read as {} here and as {} before", key,
                             dtype_name(type.dtype), dtype_name(it->second.dtype)));
    }
    return it->second;
  }
  const std::string entry_name = prefix_ + "data/" + key;
  const ZipEntry* entry = zip_.find(entry_name);
  if (entry == nullptr) {
    fail(name, fmt::format("data.pkl names storage '{}', and the zip has no entry '{}'", key, entry_name));
  }
  const ZipData data = zip_.read(*entry);
  const uint64_t width = dtype_info(type.dtype).bytes;
  const int64_t numel = id[4].as_int();
  if (numel < 0 || data.bytes.size() / width < static_cast<uint64_t>(numel)) {
    fail(name, fmt::format("storage '{}' holds {} bytes, fewer than the {} {} elements data.pkl gives it",
                           key, data.bytes.size(), numel, dtype_name(type.dtype)));
  }
  Storage s{key, type.dtype, static_cast<uint64_t>(numel),
            reinterpret_cast<const std::byte*>(data.bytes.data()), data.owner};
  return storages_.emplace(key, std::move(s)).first->second;
}

Tensor PtReader::rebuild(Value args, const std::string& name) {
  if (!args.is(PickleKind::kTuple) || args.size() < 4) {
    fail(name, "_rebuild_tensor_v2 takes (storage, storage_offset, size, stride, ...), and data.pkl "
               "gives fewer arguments");
  }
  const Storage& s = storage(args[0], name);
  if (!args[1].is(PickleKind::kInt) || args[1].as_int() < 0) {
    fail(name, "_rebuild_tensor_v2's storage_offset is not a count");
  }
  const int64_t offset = args[1].as_int();
  std::vector<int64_t> shape = ints_of(args[2], name, "size");
  const std::vector<int64_t> strides = ints_of(args[3], name, "stride");
  if (shape.size() != strides.size()) {
    fail(name, fmt::format("the view has {} sizes and {} strides", shape.size(), strides.size()));
  }
  const uint64_t elements = check_view(s, offset, shape, strides, name);
  const size_t width = dtype_info(s.dtype).bytes;
  if (elements == 0) return owned_tensor(name, s.dtype, std::move(shape), {});
  if (!swap_ && c_contiguous(shape, strides)) {
    return view_tensor(name, s.dtype, std::move(shape), s.data + offset * static_cast<int64_t>(width), s.owner);
  }
  std::vector<int64_t> steps = strides;  // a dimension of size 1 never steps
  for (size_t d = 0; d < shape.size(); ++d) steps[d] = shape[d] == 1 ? 0 : strides[d];
  std::vector<std::byte> out = gather(s.data, offset, shape, steps, width, elements);
  if (swap_) swap_bytes(out, s.dtype);
  return owned_tensor(name, s.dtype, std::move(shape), std::move(out));
}

// The view's element count, once its last element is known to be inside the storage. A view of
// more elements than its storage repeats some (a stride of 0, as expand() makes, or overlapping
// strides): its copy may be far bigger than the file, so such copies share a budget.
uint64_t PtReader::check_view(const Storage& s, int64_t offset, const std::vector<int64_t>& shape,
                              const std::vector<int64_t>& strides, const std::string& name) {
  const std::optional<uint64_t> bytes = checked_bytes(shape, s.dtype);
  if (!bytes) fail(name, fmt::format("shape {} holds more than 2^64 bytes", shape_text(shape)));
  const uint64_t elements = *bytes / dtype_info(s.dtype).bytes;
  if (elements == 0) return 0;
  const std::optional<int64_t> last = last_element(offset, shape, strides);
  if (!last || static_cast<uint64_t>(*last) >= s.elements) {
    fail(name, fmt::format("the view (offset {}, shape {}, strides {}) reaches past storage '{}', "
                           "which holds {} {} elements",
                           offset, shape_text(shape), shape_text(strides), s.key, s.elements,
                           dtype_name(s.dtype)));
  }
  if (elements <= s.elements) return elements;
  const uint64_t budget = kRepeatFloor + kRepeatPerFileByte * input_.bytes().size();
  if (*bytes > budget - std::min(budget, repeated_)) {
    fail(name, fmt::format("the view (offset {}, shape {}, strides {}) repeats storage '{}' into {} "
                           "bytes; plumb copies such views up to {} bytes for this file (16 MiB and 16 "
                           "times its size)",
                           offset, shape_text(shape), shape_text(strides), s.key, *bytes, budget));
  }
  repeated_ += *bytes;
  return elements;
}

}  // namespace

std::vector<Tensor> read_pt(const mem::InputBytes& input, const ReadOptions& /*options*/) {
  // torch/serialization.py's MAGIC_NUMBER pickled with protocol 2: the format before torch 1.6.
  constexpr std::string_view kLegacy = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";
  if (input.bytes().starts_with(kLegacy)) {
    throw Error(fmt::format("{}: a torch.save file of the format before torch 1.6 (pickles, not a zip); "
                            "plumb reads the zip format: load it and save it again with torch 1.6 or later",
                            input.name()));
  }
  return PtReader(input).read();
}

}  // namespace plumb::precision
