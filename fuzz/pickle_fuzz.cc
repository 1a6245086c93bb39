// libFuzzer target: any bytes as a pickle. Parsing must either succeed or throw plumb::Error --
// never crash, hang or throw anything else -- and a parsed document must be walkable through the
// public accessors: every value once (shared values are skipped on the second visit by id, so a
// document of nested shared references stays linear), every accessor of its kind.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "mem/pickle.h"

namespace {

using plumb::mem::PickleKind;
using plumb::mem::Value;

// Reads what a value of this kind offers; returns a checksum so nothing is optimised away.
uint64_t touch(Value v) {
  switch (v.kind()) {
    case PickleKind::kNone: return 0;
    case PickleKind::kBool: return v.as_bool() ? 1 : 0;
    case PickleKind::kInt: return static_cast<uint64_t>(v.as_int()) + (v.as_double() < 0 ? 1 : 0);
    case PickleKind::kFloat: return v.as_double() == v.as_double() ? 1 : 2;
    case PickleKind::kStr: return v.as_str().size() + v.size();
    case PickleKind::kBytes: return v.as_bytes().size() + v.size();
    case PickleKind::kList:
    case PickleKind::kTuple: return v.size() + (v.size() > 0 ? v[v.size() - 1].id() : 0);
    case PickleKind::kDict: {
      uint64_t sum = v.size();
      for (const auto& [key, value] : v.entries()) {
        if (key.is(PickleKind::kStr)) sum += v.get(key.as_str())->id();
      }
      return sum + (v.get("size").has_value() ? 1 : 0);
    }
    case PickleKind::kGlobal:  // only from parse_restricted_pickle (fuzz_precision_pt)
    case PickleKind::kCall:
    case PickleKind::kPersistent: return 0;
  }
  return 0;
}

uint64_t walk(const plumb::mem::PickleDoc& doc) {
  std::vector<bool> seen(doc.node_count(), false);
  std::vector<Value> pending = {doc.root()};
  uint64_t sum = 0;
  while (!pending.empty()) {
    const Value v = pending.back();
    pending.pop_back();
    if (seen[v.id()]) continue;
    seen[v.id()] = true;
    sum += touch(v);
    if (v.is(PickleKind::kList) || v.is(PickleKind::kTuple)) {
      for (const Value item : v.items()) pending.push_back(item);
    } else if (v.is(PickleKind::kDict)) {
      for (const auto& [key, value] : v.entries()) {
        pending.push_back(key);
        pending.push_back(value);
      }
    }
    try {
      sum += static_cast<uint64_t>(v.as_int());  // the wrong kind for most: a clear Error
    } catch (const plumb::Error&) {
    }
  }
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::mem::PickleDoc doc = plumb::mem::parse_pickle(bytes, "fuzz.pickle");
    volatile uint64_t sink = walk(doc);
    (void)sink;
  } catch (const plumb::Error&) {
    // a clear message for the user: fine
  }
  return 0;
}
