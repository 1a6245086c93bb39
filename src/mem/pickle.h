// A reader for Python pickles of plain data, the format torch.cuda.memory._dump_snapshot() writes.
// It decodes protocols 0 to 5 into a value tree held in one arena and refuses, with one message
// naming the file, the byte offset and the opcode, anything that would build a Python object
// (classes, sets, out-of-band buffers). The opcode reference is CPython's Lib/pickletools.py.
// One opt-in exception: parse_restricted_pickle (below) also reads the calls of an allow-list of
// globals, for torch.save's data.pkl (src/precision/pt_reader.cc), and builds nothing either.
//
//   const PickleDoc doc = read_pickle_file("snapshot.pickle");
//   for (const Value segment : doc.root().get("segments")->items()) {
//     const int64_t size = segment.get("total_size")->as_int();
//     for (const auto& [key, value] : segment.entries()) { ... }
//   }
//
// What the tree holds:
//   - None, True and False are one shared node each; small ints from BININT1 share a node per
//     value. Every other value is one 16-byte node; scalars need no allocation of their own.
//   - str and bytes are views into the input, which the document keeps: read_pickle_file maps
//     the file (no copy; the file must not be truncated while the document lives), parse_pickle
//     copies the bytes once. A memo reference (BINGET and friends) or DUP shares the node, so a
//     list referenced twice is one node, and walking the tree visits it twice. Value::id() names
//     the node, for callers that want to visit each shared value once (input can nest shared
//     references so that a naive walk is exponential).
//   - str holds UTF-8 as CPython decodes it (surrogatepass: lone surrogates from undecodable
//     file names are kept as 3-byte sequences); invalid UTF-8 is refused, as Python refuses it.
//     Python 2 strings (BINSTRING, SHORT_BINSTRING) become str when ASCII, as Python 3 reads
//     them by default, and are refused otherwise.
//   - Python ints beyond int64 (LONG1/LONG4 longer than 8 bytes, big protocol-0 INT/LONG) are
//     stored as Float with is_big_int() set: as_double() gives the nearest double (or ±inf),
//     as_int() throws.
//   - dict entries keep the pickle's order, keys and values interleaved. Keys are not hashed or
//     compared while reading: a key written twice stays twice in entries(); get() returns the last
//     one, the value Python keeps. get() is a linear search, fine for snapshot dicts (a handful of
//     keys); walk entries() once for big dicts.
//   - A reference cycle (a list that holds itself) is refused: it cannot come from
//     _dump_snapshot and would make every walk endless.
//   - Protocol-0 text opcodes INT, LONG, FLOAT, UNICODE, PUT and GET are read (what Python 3
//     writes for protocol 0); STRING (Python 2's quoted str) is refused.
//   - Limits: fewer than 2^32 values, strings under 4 GiB, containers under 2^32 items; beyond
//     them the reader stops with a message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mem/input.h"

namespace plumb::mem {

// kGlobal, kCall and kPersistent come only from the restricted reading of objects
// (parse_restricted_pickle, below); the default reading never makes them.
enum class PickleKind : uint8_t {
  kNone, kBool, kInt, kFloat, kStr, kBytes, kList, kTuple, kDict, kGlobal, kCall, kPersistent
};

// The Python type name: "NoneType", "bool", "int", "float", "str", "bytes", "list", "tuple",
// "dict"; "global", "call", "persistent id" for the restricted reading's values.
std::string_view kind_name(PickleKind kind);

using NodeId = uint32_t;

// One value in the arena. Internal to the reader and Value; callers use Value.
struct PickleNode {
  static constexpr uint8_t kBigInt = 1;   // a Float that was a Python int beyond int64
  static constexpr uint8_t kShared = 2;   // reached through a memo get or DUP while reading
  static constexpr uint8_t kGrown = 4;    // container whose children have power-of-two capacity
  static constexpr uint8_t kDecoded = 8;  // str decoded from protocol-0 text: payload in chars
  static constexpr uint8_t kStreamed = 16;  // an item handed to a ListSink (its nodes go)
  static constexpr uint8_t kObjectDict = 32;  // a dict made by calling an allowed global (BUILD)

  PickleKind kind = PickleKind::kNone;
  uint8_t flags = 0;
  // str/bytes: byte length; list/tuple: items; dict: 2 × entries (key, value, key, value, ...)
  // call: 2 (function, args); persistent id: 1 (the id)
  uint32_t size = 0;
  union {
    int64_t i = 0;  // Int, Bool; Global: its index in PickleObjects::globals
    double d;       // Float
    uint64_t at;    // str/bytes: offset in input (or chars); containers: offset in kids
  };
};
static_assert(sizeof(PickleNode) == 16);

// Memory for the arena's big arrays. Blocks of 2 MiB and more come straight from mmap, aligned to
// 2 MiB so that the kernel can back them with transparent huge pages (common/huge_pages.h): the
// arrays of a 1 GB snapshot span hundreds of thousands of 4 KiB pages, and where a page fault is
// dear (this project's VM) faulting them one by one made a 100 MB parse 4× slower (0.88 s
// against 0.19 s). Smaller blocks: operator new.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;  // x86-64 and arm64 with 4 KiB pages
// Throws std::bad_alloc when the mapping fails.
void* map_huge_pages(size_t bytes);
void unmap_huge_pages(void* at, size_t bytes);

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) {
    if (n * sizeof(T) < kHugePageBytes) return std::allocator<T>().allocate(n);
    return static_cast<T*>(map_huge_pages(n * sizeof(T)));
  }
  void deallocate(T* at, size_t n) {
    if (n * sizeof(T) < kHugePageBytes) return std::allocator<T>().deallocate(at, n);
    unmap_huge_pages(at, n * sizeof(T));
  }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

// Everything a document owns. Heap-allocated once, so Values stay valid when the PickleDoc that
// owns it is moved.
struct PickleArena {
  std::string name;  // for messages
  HugePageVector<PickleNode> nodes;
  HugePageVector<NodeId> kids;              // children of containers, by NodeId
  const char* input = nullptr;              // the pickle: str and bytes payloads point into it
  std::shared_ptr<const void> input_owner;  // keeps input alive (a copy, or the mapped file)
  std::string chars;                        // payloads decoded from protocol-0 text
  NodeId root = 0;

  std::string_view payload(const PickleNode& n) const {
    return {((n.flags & PickleNode::kDecoded) != 0 ? chars.data() : input) + n.at, n.size};
  }
};

class Value;

// A dict's entry, from Value::entries().
struct PickleEntry;

// Iterates over node ids with a stride (1 for items, 2 for dict entries).
template <typename T, int kStride>
class PickleRange {
 public:
  class iterator {
   public:
    using value_type = T;
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    iterator(const PickleArena* arena, const NodeId* at) : arena_(arena), at_(at) {}
    T operator*() const;
    iterator& operator++() {
      at_ += kStride;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      at_ += kStride;
      return before;
    }
    bool operator==(const iterator& other) const { return at_ == other.at_; }

   private:
    const PickleArena* arena_ = nullptr;
    const NodeId* at_ = nullptr;
  };
  PickleRange(const PickleArena* arena, const NodeId* first, size_t count)
      : arena_(arena), first_(first), count_(count) {}
  iterator begin() const { return {arena_, first_}; }
  iterator end() const { return {arena_, first_ + count_ * kStride}; }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

 private:
  const PickleArena* arena_;
  const NodeId* first_;
  size_t count_;
};

// A read-only view of one value. Cheap to copy; valid while its PickleDoc lives. Asking for the
// wrong kind (as_int() on a str, get() on a list) throws plumb::Error "<file>: expected an int,
// found a str": bad input, not a programmer error. Callers add where in the tree they looked.
class Value {
 public:
  Value(const PickleArena* arena, NodeId id) : arena_(arena), id_(id) {}

  PickleKind kind() const { return node().kind; }
  bool is(PickleKind k) const { return node().kind == k; }
  bool is_none() const { return is(PickleKind::kNone); }
  bool is_big_int() const { return (node().flags & PickleNode::kBigInt) != 0; }
  NodeId id() const { return id_; }

  bool as_bool() const;
  int64_t as_int() const;             // Int only (not bool, not a big int)
  double as_double() const;           // Float or Int
  std::string_view as_str() const;    // str: its UTF-8 bytes
  std::string_view as_bytes() const;  // bytes (and bytearray)

  // list/tuple: items; dict: entries; str/bytes: bytes. Other kinds throw.
  size_t size() const;
  // list/tuple item; out of range throws.
  Value operator[](size_t index) const;
  // dict value under a str key (the last one written), or nullopt. Linear in the dict's size.
  std::optional<Value> get(std::string_view key) const;

  PickleRange<Value, 1> items() const;          // list/tuple
  PickleRange<PickleEntry, 2> entries() const;  // dict, in pickle order

  // The restricted reading's values (parse_restricted_pickle). A global: its index in
  // PickleObjects::globals. A call (REDUCE): the function (a global) and its arguments (a tuple).
  // A persistent id (BINPERSID): the id, any value.
  size_t global_index() const;
  Value call_function() const;
  Value call_args() const;
  Value persistent_id() const;

 private:
  const PickleNode& node() const { return arena_->nodes[id_]; }
  [[noreturn]] void wrong_kind(std::string_view expected) const;
  [[noreturn]] void out_of_range(size_t index) const;
  const NodeId* kids() const { return arena_->kids.data() + node().at; }

  const PickleArena* arena_;
  NodeId id_;
};

struct PickleEntry {
  Value key;
  Value value;
};

inline bool Value::as_bool() const {
  if (!is(PickleKind::kBool)) wrong_kind("a bool");
  return node().i != 0;
}

inline int64_t Value::as_int() const {
  if (!is(PickleKind::kInt)) wrong_kind("an int");
  return node().i;
}

inline double Value::as_double() const {
  if (is(PickleKind::kFloat)) return node().d;
  if (!is(PickleKind::kInt)) wrong_kind("a number");
  return static_cast<double>(node().i);
}

inline std::string_view Value::as_str() const {
  if (!is(PickleKind::kStr)) wrong_kind("a str");
  return arena_->payload(node());
}

inline std::string_view Value::as_bytes() const {
  if (!is(PickleKind::kBytes)) wrong_kind("bytes");
  return arena_->payload(node());
}

inline size_t Value::size() const {
  switch (kind()) {
    case PickleKind::kDict: return node().size / 2;
    case PickleKind::kList:
    case PickleKind::kTuple:
    case PickleKind::kStr:
    case PickleKind::kBytes: return node().size;
    default: wrong_kind("a list, tuple, dict, str or bytes");
  }
}

inline Value Value::operator[](size_t index) const {
  if (!is(PickleKind::kList) && !is(PickleKind::kTuple)) wrong_kind("a list or tuple");
  if (index >= node().size) out_of_range(index);
  return Value(arena_, kids()[index]);
}

inline std::optional<Value> Value::get(std::string_view key) const {
  if (!is(PickleKind::kDict)) wrong_kind("a dict");
  const NodeId* first = kids();
  for (const NodeId* at = first + node().size; at != first; at -= 2) {
    const PickleNode& k = arena_->nodes[at[-2]];
    if (k.kind == PickleKind::kStr && arena_->payload(k) == key) {
      return Value(arena_, at[-1]);
    }
  }
  return std::nullopt;
}

inline size_t Value::global_index() const {
  if (!is(PickleKind::kGlobal)) wrong_kind("a global");
  return static_cast<size_t>(node().i);
}

inline Value Value::call_function() const {
  if (!is(PickleKind::kCall)) wrong_kind("a call");
  return Value(arena_, kids()[0]);
}

inline Value Value::call_args() const {
  if (!is(PickleKind::kCall)) wrong_kind("a call");
  return Value(arena_, kids()[1]);
}

inline Value Value::persistent_id() const {
  if (!is(PickleKind::kPersistent)) wrong_kind("a persistent id");
  return Value(arena_, kids()[0]);
}

inline PickleRange<Value, 1> Value::items() const {
  if (!is(PickleKind::kList) && !is(PickleKind::kTuple)) wrong_kind("a list or tuple");
  return {arena_, kids(), node().size};
}

inline PickleRange<PickleEntry, 2> Value::entries() const {
  if (!is(PickleKind::kDict)) wrong_kind("a dict");
  return {arena_, kids(), node().size / 2};
}

template <typename T, int kStride>
T PickleRange<T, kStride>::iterator::operator*() const {
  if constexpr (kStride == 1) {
    return Value(arena_, at_[0]);
  } else {
    return PickleEntry{Value(arena_, at_[0]), Value(arena_, at_[1])};
  }
}

// A decoded pickle. Move-only; Values taken from it stay valid across moves.
class PickleDoc {
 public:
  explicit PickleDoc(std::unique_ptr<PickleArena> arena) : arena_(std::move(arena)) {}

  Value root() const { return Value(arena_.get(), arena_->root); }
  const std::string& name() const { return arena_->name; }
  size_t node_count() const { return arena_->nodes.size(); }

 private:
  std::unique_ptr<PickleArena> arena_;
};

// ---- Streaming: a snapshot's events without their tree -------------------------------------
//
// A snapshot is one dict whose device_traces[d] holds most of the file: millions of small event
// dicts. Streaming hands each item of that one list to a ListSink as the list's APPENDS takes it
// and then drops the nodes the items were made of (the pickle's memo and the values shared with
// the rest of the document are kept, moved down where needed), so the document holds everything
// else and memory follows the kept values, not the file.
//
// Opcodes, checks and messages are the whole-tree reader's. Streaming is speculative: the list is
// chosen when its first batch opens (MARK) by where it is about to go — root[key][index] as the
// stack shows it — and when the pickle later does something that would make the streamed items
// matter elsewhere (a memo get or DUP of a dropped item or of the list, an item popped or put
// into another container), the reader throws PickleStreamFallback and the caller reads the file
// whole instead. The caller also checks that the list it got is the one the document ends with
// at root[key][index] (StreamedList::list).

struct PickleStreamFallback {
  const char* why;  // for tests
};

// The fast lane: an item that is a dict of plain values (ints, floats, None, bools and values
// fetched from the memo) is decoded straight from the bytes, without nodes, into one FlatValue per
// key the sink names (ListSink::fast_keys; the last of a repeated key, as Value::get()). Anything
// else in it (a new key, a nested container, a big int) and the item takes the ordinary way.
// Its keys are the same memo gets item after item, so the lane remembers the last item's keys
// byte for byte (the shape): the next item whose key bytes are those, its values plain and no
// FRAME inside, is read without looking a key up. A memo store that is not an append and a
// dropped region (node ids change) forget the shape.
struct FlatValue {
  bool present = false;
  NodeId ref = std::numeric_limits<NodeId>::max();  // a value from the memo: a node of the document
  PickleNode scalar;                                 // else: None, bool, int or float
};

class ListSink {
 public:
  virtual ~ListSink() = default;
  // The keys the fast lane looks for (none: no fast lane), and an item it decoded, one FlatValue
  // per key in that order. `arena` resolves FlatValue::ref (Value(arena, ref)).
  virtual std::vector<std::string_view> fast_keys() const { return {}; }
  virtual void flat_item(const PickleArena* /*arena*/, const FlatValue* /*values*/, size_t /*index*/) {}
  // Whether the list about to be placed at root[key][index] is the one to stream.
  virtual bool wants(std::string_view key, size_t index) const = 0;
  // The list's items in order; `index` counts them from 0. The value is valid during the call.
  virtual void item(Value value, size_t index) = 0;
  // Node ids from `first` on are about to be reused: forget anything keyed by them.
  virtual void forget_nodes_from(NodeId first) = 0;
};

struct StreamedList {
  NodeId list = std::numeric_limits<NodeId>::max();  // the streamed list's node (none: max)
  size_t items = 0;
  size_t shaped = 0;  // of the items, those the fast lane took by the previous item's shape
  bool chosen() const { return list != std::numeric_limits<NodeId>::max(); }
};

// Parses `input` (mem/input.h), streaming the list `sink` wants; the file's pages behind the
// reader are released as it goes. Throws Error as parse_pickle does, PickleStreamFallback as
// described above.
PickleDoc parse_pickle_streaming(const InputBytes& input, ListSink& sink, StreamedList& streamed);

// Decodes one pickle (bytes after its STOP are ignored, as pickle.load does). `name` is the file
// name for messages. Throws plumb::Error "<name>: byte <N>: <problem>" naming the opcode.
// Copies `bytes`: the document does not refer to the caller's buffer.
PickleDoc parse_pickle(std::string_view bytes, const std::string& name);

// Parses bytes read once (mem/input.h) without copying them: the document keeps them alive.
PickleDoc parse_pickle(const InputBytes& input);

// ---- Restricted objects (opt-in) ------------------------------------------------------------
//
// In the spirit of torch.load(weights_only=True): the caller names the globals it accepts, and the
// reader then also reads
//   - GLOBAL and STACK_GLOBAL of those names: a kGlobal value (Value::global_index(), its index
//     in `globals`); any other name is refused, naming it: "<name>: byte 2: GLOBAL 'os system' is
//     not allowed (plumb reads <reads>)";
//   - REDUCE of such a global with a tuple: a kCall value (call_function(), call_args()). A global
//     marked makes_dict, called with no arguments, gives an empty dict instead, which SETITEMS
//     then fills (collections.OrderedDict reduces so);
//   - BUILD on a dict made so: its state (the attributes, such as a state dict's _metadata) is
//     dropped; BUILD on anything else is refused;
//   - BINPERSID: a kPersistent value (persistent_id()), which the caller resolves.
// Nothing is imported or called: the caller interprets the values. Every other object opcode
// (INST, OBJ, NEWOBJ, sets, PERSID, buffers) is refused as in the default reading.
struct PickleGlobal {
  std::string_view module;  // "torch._utils"
  std::string_view name;    // "_rebuild_tensor_v2"
  bool makes_dict = false;  // called with (), makes an empty dict
};

struct PickleObjects {
  std::vector<PickleGlobal> globals;
  std::string reads;  // what a refusal says plumb reads: "tensors only: torch._utils...., ..."
};

// Parses `input` without copying it, reading the objects `objects` allows as above. The default
// readers (parse_pickle, read_pickle_file) refuse every object opcode, as before.
PickleDoc parse_restricted_pickle(const InputBytes& input, const PickleObjects& objects);

// Maps the whole file (reads it when it cannot be mapped, e.g. a pipe) and parses it; an
// unreadable file is an Error naming the path.
PickleDoc read_pickle_file(const std::string& path);

}  // namespace plumb::mem
