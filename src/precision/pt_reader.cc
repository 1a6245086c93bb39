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
    walk(doc.root(), input_.name(), true);
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
    const std::string_view order = zip_.read(*entry).bytes;
    if (order != "little" && order != "big") {
      throw Error(fmt::format("{}: '{}byteorder' holds '{}', not 'little' or 'big'", input_.name(),
                              prefix_, order.substr(0, 16)));
    }
    swap_ = (order == "big") != (std::endian::native == std::endian::big);
  }

  // ---- the value tree
  void walk(Value v, const std::string& name, bool top) {
    const auto child = [&](std::string_view key) {
      return fmt::format("{}{}{}", name, top ? ":" : ".", key);
    };
    switch (v.kind()) {
      case PickleKind::kCall: return call(v, name);
      case PickleKind::kDict:
        if (!seen_.insert({v.id(), {}}).second) return;  // a shared container: read once
        for (const auto& [key, value] : v.entries()) {
          if (key.is(PickleKind::kStr)) walk(value, child(key.as_str()), false);
          if (key.is(PickleKind::kInt)) walk(value, child(std::to_string(key.as_int())), false);
        }
        return;
      case PickleKind::kList:
      case PickleKind::kTuple: {
        if (!seen_.insert({v.id(), {}}).second) return;
        size_t index = 0;
        for (const Value item : v.items()) walk(item, child(std::to_string(index++)), false);
        return;
      }
      default: return;  // ints, strings, None: not tensors
    }
  }

  void call(Value v, const std::string& name) {
    const Allowed& what = allowed(v.call_function());
    const Value args = v.call_args();
    if (what.make == Make::kParameter) {
      if (args.size() == 0) fail(name, fmt::format("{} has no arguments", what.name));
      return walk(args[0], name, false);
    }
    if (what.make != Make::kTensor) return;
    // A tensor reached twice (a memo reference) is read once and named each time.
    const auto [it, added] = seen_.insert({v.id(), {}});
    if (!added && it->second) {
      Tensor again = *it->second;
      again.name = name;
      tensors_.push_back(std::move(again));
      return;
    }
    tensors_.push_back(rebuild(args, name));
    seen_[v.id()] = tensors_.back();
  }

  [[noreturn]] static void fail(const std::string& name, std::string_view what) {
    throw Error(fmt::format("{}: {}", name, what));
  }

  // ---- _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks, ...)
  Tensor rebuild(Value args, const std::string& name);
  const Storage& storage(Value pid, const std::string& name);

  const mem::InputBytes& input_;
  ZipArchive zip_;
  std::string prefix_;  // "archive/"
  bool swap_ = false;   // the storages' byte order is not this machine's
  std::vector<Tensor> tensors_;
  std::unordered_map<mem::NodeId, std::optional<Tensor>> seen_;
  std::unordered_map<std::string, Storage> storages_;
};

}  // namespace

std::vector<Tensor> read_pt(const mem::InputBytes& input, const ReadOptions& /*options*/) {
  return PtReader(input).read();
}

}  // namespace plumb::precision
