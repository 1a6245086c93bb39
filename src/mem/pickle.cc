#include "mem/pickle.h"

#include <sys/mman.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_map>

#include "common/error.h"
#include "common/huge_pages.h"
#include "mem/input.h"

namespace plumb::mem {
namespace {

// Opcodes, as CPython's Lib/pickletools.py names them, by the protocol that added them.
// clang-format off
enum Op : uint8_t {
  MARK = 0x28, STOP = 0x2e, POP = 0x30, POP_MARK = 0x31, DUP = 0x32, FLOAT = 0x46, INT = 0x49,
  BININT = 0x4a, BININT1 = 0x4b, LONG = 0x4c, BININT2 = 0x4d, NONE = 0x4e, PERSID = 0x50,
  BINPERSID = 0x51, REDUCE = 0x52, STRING = 0x53, BINSTRING = 0x54, SHORT_BINSTRING = 0x55,
  UNICODE = 0x56, BINUNICODE = 0x58, APPEND = 0x61, BUILD = 0x62, GLOBAL = 0x63, DICT = 0x64,
  EMPTY_DICT = 0x7d, APPENDS = 0x65, GET = 0x67, BINGET = 0x68, INST = 0x69, LONG_BINGET = 0x6a,
  LIST = 0x6c, EMPTY_LIST = 0x5d, OBJ = 0x6f, PUT = 0x70, BINPUT = 0x71, LONG_BINPUT = 0x72,
  SETITEM = 0x73, TUPLE = 0x74, EMPTY_TUPLE = 0x29, SETITEMS = 0x75, BINFLOAT = 0x47,
  // 2
  PROTO = 0x80, NEWOBJ = 0x81, EXT1 = 0x82, EXT2 = 0x83, EXT4 = 0x84, TUPLE1 = 0x85,
  TUPLE2 = 0x86, TUPLE3 = 0x87, NEWTRUE = 0x88, NEWFALSE = 0x89, LONG1 = 0x8a, LONG4 = 0x8b,
  // 3
  BINBYTES = 0x42, SHORT_BINBYTES = 0x43,
  // 4
  SHORT_BINUNICODE = 0x8c, BINUNICODE8 = 0x8d, BINBYTES8 = 0x8e, EMPTY_SET = 0x8f,
  ADDITEMS = 0x90, FROZENSET = 0x91, NEWOBJ_EX = 0x92, STACK_GLOBAL = 0x93, MEMOIZE = 0x94,
  FRAME = 0x95,
  // 5
  BYTEARRAY8 = 0x96, NEXT_BUFFER = 0x97, READONLY_BUFFER = 0x98,
};
// clang-format on

struct OpInfo {
  uint8_t code = 0;
  const char* name = nullptr;
  const char* refusal = nullptr;  // why plumb refuses it; null when read
};

constexpr const char* kObject = "builds a Python object";
constexpr const char* kSet = "builds a Python set";
constexpr const char* kPersistent = "loads a persistent object from outside the pickle";
constexpr const char* kBuffer = "takes an out-of-band buffer";

// Names for messages; refused opcodes with the reason. Codes not listed are unknown.
constexpr std::array<OpInfo, 256> make_op_table() {
  // clang-format off
  const OpInfo ops[] = {
    {MARK, "MARK"}, {STOP, "STOP"}, {POP, "POP"}, {POP_MARK, "POP_MARK"}, {DUP, "DUP"},
    {FLOAT, "FLOAT"}, {INT, "INT"}, {BININT, "BININT"}, {BININT1, "BININT1"}, {LONG, "LONG"},
    {BININT2, "BININT2"}, {NONE, "NONE"}, {BINSTRING, "BINSTRING"},
    {SHORT_BINSTRING, "SHORT_BINSTRING"}, {UNICODE, "UNICODE"}, {BINUNICODE, "BINUNICODE"},
    {APPEND, "APPEND"}, {DICT, "DICT"}, {EMPTY_DICT, "EMPTY_DICT"}, {APPENDS, "APPENDS"},
    {GET, "GET"}, {BINGET, "BINGET"}, {LONG_BINGET, "LONG_BINGET"}, {LIST, "LIST"},
    {EMPTY_LIST, "EMPTY_LIST"}, {PUT, "PUT"}, {BINPUT, "BINPUT"}, {LONG_BINPUT, "LONG_BINPUT"},
    {SETITEM, "SETITEM"}, {TUPLE, "TUPLE"}, {EMPTY_TUPLE, "EMPTY_TUPLE"},
    {SETITEMS, "SETITEMS"}, {BINFLOAT, "BINFLOAT"}, {PROTO, "PROTO"}, {TUPLE1, "TUPLE1"},
    {TUPLE2, "TUPLE2"}, {TUPLE3, "TUPLE3"}, {NEWTRUE, "NEWTRUE"}, {NEWFALSE, "NEWFALSE"},
    {LONG1, "LONG1"}, {LONG4, "LONG4"}, {BINBYTES, "BINBYTES"},
    {SHORT_BINBYTES, "SHORT_BINBYTES"}, {SHORT_BINUNICODE, "SHORT_BINUNICODE"},
    {BINUNICODE8, "BINUNICODE8"}, {BINBYTES8, "BINBYTES8"}, {MEMOIZE, "MEMOIZE"},
    {FRAME, "FRAME"}, {BYTEARRAY8, "BYTEARRAY8"},

    {GLOBAL, "GLOBAL", kObject}, {STACK_GLOBAL, "STACK_GLOBAL", kObject},
    {REDUCE, "REDUCE", kObject}, {BUILD, "BUILD", kObject}, {INST, "INST", kObject},
    {OBJ, "OBJ", kObject}, {NEWOBJ, "NEWOBJ", kObject}, {NEWOBJ_EX, "NEWOBJ_EX", kObject},
    {EXT1, "EXT1", kObject}, {EXT2, "EXT2", kObject}, {EXT4, "EXT4", kObject},
    {PERSID, "PERSID", kPersistent}, {BINPERSID, "BINPERSID", kPersistent},
    {EMPTY_SET, "EMPTY_SET", kSet}, {ADDITEMS, "ADDITEMS", kSet}, {FROZENSET, "FROZENSET", kSet},
    {NEXT_BUFFER, "NEXT_BUFFER", kBuffer}, {READONLY_BUFFER, "READONLY_BUFFER", kBuffer},
    {STRING, "STRING", "holds a quoted Python 2 str, which Python 3 never writes"},
  };
  // clang-format on
  std::array<OpInfo, 256> table{};
  for (const OpInfo& op : ops) table[op.code] = op;
  return table;
}

constexpr std::array<OpInfo, 256> kOps = make_op_table();

constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();
constexpr NodeId kNoneNode = 0, kTrueNode = 1, kFalseNode = 2;
constexpr uint64_t kMaxCount = std::numeric_limits<uint32_t>::max();
// pickle.HIGHEST_PROTOCOL since Python 3.8.
constexpr int kHighestProtocol = 5;
// Memo keys up to twice the dense table's size plus this many go into the table; keys beyond
// (only hand-made pickles skip ahead) go into a hash map, so memory follows the input.
constexpr uint64_t kDenseMemoSlack = 4096;
// Reserved nodes and children per input byte. A snapshot-like pickle (a list of 6-key dicts, keys
// and repeated strings memo references) averages 21 bytes per node and 9 per child.
constexpr size_t kBytesPerValue = 16;
constexpr size_t kBytesPerKid = 8;
// Reserved memo entries per input byte: a snapshot memoizes each event dict (50 bytes or more).
constexpr size_t kBytesPerMemo = 32;
// What a streaming reader reserves for the values it keeps (they grow past it when needed).
constexpr size_t kStreamReserveBytes = size_t{16} << 20;
// The memo entry of a streamed item whose nodes are gone (never an index into the arena): a memo
// get of it makes the reader fall back. Items leave the stack as they are streamed, so the memo is
// the only way back to one.
constexpr NodeId kCollapsed = std::numeric_limits<NodeId>::max() - 1;
// DBL_MAX is just under 2^1024.
constexpr uint64_t kMaxDoubleExponent = 1024;
// The longest text quoted in a message.
constexpr size_t kQuoteMax = 40;

// Values with children: a call and a persistent id hold theirs as a container does, so that the
// cycle check sees through them.
bool is_container(PickleKind k) {
  return k == PickleKind::kList || k == PickleKind::kTuple || k == PickleKind::kDict ||
         k == PickleKind::kCall || k == PickleKind::kPersistent;
}

// Text from the input, printable: other bytes as \xNN, long text cut.
std::string quoted(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kQuoteMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out + (s.size() > kQuoteMax ? "'..." : "'");
}

// Appends code point `cp` as UTF-8; surrogates as their 3-byte form, like Python's surrogatepass.
void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// Where `s` stops being UTF-8 as CPython's decoder with surrogatepass reads it (RFC 3629, plus
// ED A0..BF for surrogates), or n when all of it is.
size_t utf8_valid_prefix(const uint8_t* s, size_t n) {
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  size_t i = 0;
  while (i < n) {
    uint64_t word = 0;
    if (i + 8 <= n && (std::memcpy(&word, s + i, 8), (word & kHighBits) == 0)) {
      i += 8;
      continue;
    }
    const uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xbf;  // the second byte's range
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return i;
    }
    if (n - i < len || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k) {
      if ((s[i + k] & 0xc0) != 0x80) return i;
    }
    i += len;
  }
  return n;
}

uint64_t little_endian(const uint8_t* b, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

// BINFLOAT's 8 bytes: a big-endian IEEE double.
double big_endian_double(const uint8_t* b) {
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits = (bits << 8) | b[i];
  return std::bit_cast<double>(bits);
}

// A two's-complement little-endian integer of n bytes (LONG1, LONG4) when it fits in int64;
// `used` is left at its length without the sign bytes that add nothing.
std::optional<int64_t> small_long(const uint8_t* b, uint64_t n, uint64_t& used) {
  used = n;
  if (n == 0) return 0;
  const bool negative = (b[n - 1] & 0x80) != 0;
  const uint8_t fill = negative ? 0xff : 0x00;
  while (used > 1 && b[used - 1] == fill && ((b[used - 2] ^ fill) & 0x80) == 0) --used;
  if (used > 8) return std::nullopt;
  uint64_t v = negative ? ~uint64_t{0} : 0;
  for (uint64_t i = used; i-- > 0;) v = (v << 8) | b[i];
  return static_cast<int64_t>(v);
}

// One insertion into a container that had been shared (memo get or DUP) before: the only kind of
// insertion that can close a reference cycle.
struct SharedInsert {
  NodeId parent;
  NodeId child;
  size_t at;  // byte offset of the opcode
};

// The fast lane's memory (pickle.h): the sink's keys, and which memo'd str node is which key.
// A node id is reused once its region goes: drop_region empties the cache.
struct FastLane {
  static constexpr size_t kCache = 64;
  static constexpr size_t kMaxKeys = 16;
  struct Entry {
    NodeId node = std::numeric_limits<NodeId>::max();
    int8_t slot = -1;  // -1: a key the sink does not want
  };
  // The last item the general way took, as the sequence of its keys' memo gets byte for byte:
  // the next item with the same key bytes needs no key lookups. Valid while the memo entries it
  // names stay (generation: PickleReader::memo_generation_ when it was recorded).
  static constexpr size_t kMaxPairs = 2 * kMaxKeys;
  struct Shape {
    uint64_t generation = std::numeric_limits<uint64_t>::max();
    size_t pairs = 0;
    std::array<uint64_t, kMaxPairs> bytes{};  // the key's get opcode and argument, little-endian
    std::array<uint64_t, kMaxPairs> mask{};
    std::array<uint8_t, kMaxPairs> length{};
    std::array<int8_t, kMaxPairs> slot{};
  };
  std::vector<std::string_view> keys;
  std::array<Entry, kCache> cache{};
  Shape shape;
  std::array<NodeId, kCache> marked = unmarked();  // value nodes marked kShared already
  std::array<FlatValue, kMaxKeys> values{};  // the item being decoded, one per key
  FlatValue ignored;                         // the value of a key the sink does not want
  bool enabled = false;

  static std::array<NodeId, kCache> unmarked() {
    std::array<NodeId, kCache> a;
    a.fill(std::numeric_limits<NodeId>::max());
    return a;
  }
  void forget() {
    cache.fill(Entry{});
    marked = unmarked();
    shape.generation = std::numeric_limits<uint64_t>::max();
  }
};

// Streaming (pickle.h): the nodes, children and memo keys made since the streamed list's current
// batch began; they go when its APPENDS has handed the items over.
struct Region {
  size_t nodes = 0, kids = 0, chars = 0, memo = 0, shared = 0;
  bool keep = false;  // something older was made to refer into the region: it must stay
};

// Streaming: values made in a region that must outlive it, copied down to where the region
// began, after which the region is cut off (drop_region). Shared values inside stay shared.
class Evacuation {
 public:
  Evacuation(PickleArena& arena, NodeId first, size_t kids, size_t chars)
      : a_(arena), first_(first), kids_(kids), chars_(chars) {}

  // The id `id` will have once finish() has run.
  NodeId keep(NodeId id) {
    if (id < first_) return id;
    const auto [it, added] = moved_.try_emplace(id, static_cast<NodeId>(first_ + nodes_.size()));
    if (added) {
      nodes_.push_back(a_.nodes[id]);
      pending_.push_back(id);
    }
    return it->second;
  }

  void finish() {
    while (!pending_.empty()) copy_one();
    a_.nodes.resize(first_);
    a_.kids.resize(kids_);
    a_.chars.resize(chars_);
    a_.nodes.insert(a_.nodes.end(), nodes_.begin(), nodes_.end());
    a_.kids.insert(a_.kids.end(), kids_out_.begin(), kids_out_.end());
    a_.chars += chars_out_;
  }

 private:
  void copy_one() {
    const NodeId old = pending_.back();
    pending_.pop_back();
    const size_t at = moved_[old] - first_;
    const PickleNode from = a_.nodes[old];
    if ((from.flags & PickleNode::kDecoded) != 0) {
      nodes_[at].at = chars_ + chars_out_.size();
      chars_out_.append(a_.payload(from));
    } else if (is_container(from.kind)) {
      const size_t base = kids_out_.size();
      kids_out_.resize(base + from.size);
      for (uint32_t i = 0; i < from.size; ++i) kids_out_[base + i] = keep(a_.kids[from.at + i]);
      nodes_[at].at = kids_ + base;
      nodes_[at].flags = static_cast<uint8_t>(nodes_[at].flags & ~PickleNode::kGrown);
    }
  }

  PickleArena& a_;
  NodeId first_;
  size_t kids_, chars_;
  std::unordered_map<NodeId, NodeId> moved_;
  std::vector<NodeId> pending_;
  std::vector<PickleNode> nodes_;
  std::vector<NodeId> kids_out_;
  std::string chars_out_;
};

class PickleReader {
 public:
  // Reads the `size` bytes at arena->input; with a sink, streams the list it wants.
  PickleReader(std::unique_ptr<PickleArena> arena, size_t size, ListSink* sink = nullptr,
               StreamedList* streamed = nullptr, InputWindow* window = nullptr,
               const PickleObjects* objects = nullptr)
      : objects_(objects),
        begin_(reinterpret_cast<const uint8_t*>(arena->input)),
        p_(begin_),
        end_(begin_ + size),
        arena_(std::move(arena)),
        sink_(sink),
        streamed_(streamed),
        window_(window) {
    if (sink_ != nullptr) {
      lane_.keys = sink_->fast_keys();
      lane_.enabled = !lane_.keys.empty() && lane_.keys.size() <= FastLane::kMaxKeys;
    }
    // The arrays grow past these when needed; untouched capacity costs address space only.
    // Streaming keeps a small part of the file's values.
    const size_t kept = sink_ != nullptr ? std::min(size, kStreamReserveBytes) : size;
    arena_->nodes.reserve(kept / kBytesPerValue + 16);
    arena_->kids.reserve(kept / kBytesPerKid + 16);
    memo_.reserve(size / kBytesPerMemo + 16);
    arena_->nodes.push_back(PickleNode{});  // kNoneNode
    arena_->nodes.push_back(PickleNode{PickleKind::kBool, 0, 0, {1}});
    arena_->nodes.push_back(PickleNode{PickleKind::kBool, 0, 0, {0}});
    small_ints_.fill(kNoNode);
  }

  PickleDoc read() {
    if (begin_ == end_) throw Error(fmt::format("{}: empty, not a pickle", arena_->name));
    for (;;) {
      if (p_ == end_) {
        throw Error(fmt::format("{}: truncated at byte {}: the data ends before the STOP opcode",
                                arena_->name, end_ - begin_));
      }
      op_at_ = static_cast<size_t>(p_ - begin_);
      if (window_ != nullptr) window_->at(op_at_);
      op_ = *p_++;
      if (op_ == STOP) break;
      step();
    }
    if (streaming()) refuse_collapsed(0);
    // A streamed item's nodes are gone, so a cycle through one cannot be found here: the whole
    // reader decides (an insertion into a container already shared is rare in a snapshot).
    if (streaming() && !shared_inserts_.empty()) fall_back(kSharedInsert);
    arena_->root = pop();
    check_cycles();
    return PickleDoc(std::move(arena_));
  }

 private:
  // ---- errors
  [[noreturn]] void fail_at(size_t at, std::string_view what) const {
    const bool looks_like_pickle = begin_ != end_ && *begin_ == PROTO;
    throw Error(fmt::format("{}: byte {}: {}{}", arena_->name, at, what,
                            looks_like_pickle ? ""
                                              : " (not a pickle of protocol 2 or later: those "
                                                "start with PROTO, 0x80)"));
  }
  [[noreturn]] void fail(std::string_view what) const { fail_at(op_at_, what); }
  const char* op_name() const { return kOps[op_].name; }
  [[noreturn]] void truncated() const {
    throw Error(
        fmt::format("{}: truncated at byte {} inside {}", arena_->name, end_ - begin_, op_name()));
  }
  [[noreturn]] void underflow() const {
    fail(fmt::format("{} finds no value on the stack{}", op_name(),
                     marks_.empty() ? "" : " above the last MARK"));
  }

  // ---- input
  const uint8_t* take(uint64_t n) {
    if (n > static_cast<uint64_t>(end_ - p_)) truncated();
    const uint8_t* at = p_;
    p_ += n;
    return at;
  }
  uint64_t take_uint(int n) { return little_endian(take(n), n); }
  std::string_view take_line() {
    const void* nl = std::memchr(p_, '\n', static_cast<size_t>(end_ - p_));
    if (nl == nullptr) truncated();
    const auto* at = reinterpret_cast<const char*>(p_);
    p_ = static_cast<const uint8_t*>(nl) + 1;
    return {at, static_cast<size_t>(reinterpret_cast<const char*>(nl) - at)};
  }

  // ---- nodes and the stack
  NodeId add_node(PickleKind kind) {
    auto& nodes = arena_->nodes;
    if (nodes.size() >= kCollapsed) fail(fmt::format("more than {} values", kCollapsed - 1));
    nodes.emplace_back().kind = kind;
    return static_cast<NodeId>(nodes.size() - 1);
  }
  void push(NodeId id) { stack_.push_back(id); }
  void push_int(int64_t v) {
    const NodeId id = add_node(PickleKind::kInt);
    arena_->nodes[id].i = v;
    push(id);
  }
  void push_float(double d, uint8_t flags = 0) {
    const NodeId id = add_node(PickleKind::kFloat);
    arena_->nodes[id].d = d;
    arena_->nodes[id].flags = flags;
    push(id);
  }
  // A str or bytes whose payload is the n bytes at `data` in the input.
  void push_chars(PickleKind kind, const uint8_t* data, uint64_t n) {
    if (n > kMaxCount) {
      fail(fmt::format("{} holds {} bytes; plumb reads up to 4 GiB", op_name(), n));
    }
    const NodeId id = add_node(kind);
    PickleNode& node = arena_->nodes[id];
    node.at = static_cast<uint64_t>(data - begin_);
    node.size = static_cast<uint32_t>(n);
    push(id);
  }
  NodeId pop() {
    if (stack_.size() <= fence_) underflow();
    const NodeId id = stack_.back();
    if (id == kCollapsed) fall_back(kItemElsewhere);
    stack_.pop_back();
    return id;
  }
  NodeId top() const {
    if (stack_.size() <= fence_) underflow();
    const NodeId id = stack_.back();
    if (id == kCollapsed) fall_back(kItemElsewhere);
    if (streaming() && id == stream_list_) fall_back("the streamed list is shared (DUP, memo put)");
    return id;
  }
  void push_mark() {
    if (sink_ != nullptr && !streaming() && !stack_.empty()) maybe_stream(stack_.size() - 1);
    marks_.push_back(stack_.size());
    fence_ = stack_.size();
  }
  size_t pop_mark() {
    if (marks_.empty()) {
      fail(fmt::format("{} needs a MARK before it, and there is none", op_name()));
    }
    const size_t mark = marks_.back();
    marks_.pop_back();
    fence_ = marks_.empty() ? 0 : marks_.back();
    return mark;
  }

  // A new container holding the top `n` values of the stack, which it pops.
  void push_container(PickleKind kind, size_t n) {
    if (streaming()) refuse_collapsed(stack_.size() - n);
    if (n > kMaxCount) {
      fail(fmt::format("{} makes a container of more than {} items", op_name(), kMaxCount));
    }
    const NodeId id = add_node(kind);
    auto& kids = arena_->kids;
    arena_->nodes[id].at = kids.size();
    arena_->nodes[id].size = static_cast<uint32_t>(n);
    kids.insert(kids.end(), stack_.end() - static_cast<ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    push(id);
  }

  // The target of APPEND(S)/SETITEM(S): a list or dict at stack position `at`.
  NodeId target(size_t at, PickleKind want) const {
    const NodeId id = stack_[at];
    if (id == kCollapsed) fall_back(kItemElsewhere);
    const PickleKind kind = arena_->nodes[id].kind;
    if (kind != want) {
      fail(fmt::format("{} adds to a {}, not a {}", op_name(), kind_name(kind), kind_name(want)));
    }
    return id;
  }

  // Appends the stack's values from `from` to its top to container `parent`, then pops them.
  // Children live in one array: a container first gets exactly what its first batch needs;
  // when a later batch does not fit and the container is not last in the array, it moves to the
  // end with power-of-two capacity (kGrown), so repeated APPENDS cost amortised O(1) per item.
  void append_from(NodeId parent, size_t from) {
    const size_t n = stack_.size() - from;
    if (n == 0) return;
    if (streaming()) {
      if (parent == stream_list_) return stream_items(from);
      refuse_collapsed(from);
      if (parent < region_.nodes) note_old_parent(from);
    }
    PickleNode& node = arena_->nodes[parent];
    auto& kids = arena_->kids;
    const uint64_t count = node.size;
    const uint64_t want = count + n;
    if (want > kMaxCount) {
      fail(fmt::format("{} makes a container of more than {} items", op_name(), kMaxCount));
    }
    const bool grown = (node.flags & PickleNode::kGrown) != 0;
    const uint64_t cap = grown ? std::bit_ceil(count) : count;
    if (count == 0) {
      node.at = kids.size();
      kids.resize(kids.size() + n);
    } else if (want > cap && node.at + cap == kids.size()) {
      kids.resize(node.at + (grown ? std::bit_ceil(want) : want));
    } else if (want > cap) {
      const uint64_t moved_to = kids.size();
      kids.resize(moved_to + std::bit_ceil(want));
      std::copy_n(kids.begin() + static_cast<ptrdiff_t>(node.at), count,
                  kids.begin() + static_cast<ptrdiff_t>(moved_to));
      node.at = moved_to;
      node.flags |= PickleNode::kGrown;
    }
    std::copy(stack_.begin() + static_cast<ptrdiff_t>(from), stack_.end(),
              kids.begin() + static_cast<ptrdiff_t>(node.at + count));
    node.size = static_cast<uint32_t>(want);
    if ((node.flags & PickleNode::kShared) != 0) note_shared_insert(parent, from);
    stack_.resize(from);
  }

  void note_shared_insert(NodeId parent, size_t from) {
    for (size_t i = from; i < stack_.size(); ++i) {
      if (is_container(arena_->nodes[stack_[i]].kind)) {
        shared_inserts_.push_back({parent, stack_[i], op_at_});
      }
    }
  }

  // ---- memo
  void memo_put(uint64_t key) { memo_store(key, top()); }
  void memo_store(uint64_t key, NodeId id) {
    if (key == memo_.size() && sparse_memo_.empty()) {  // the next key, as MEMOIZE gives it
      memo_.push_back(id);
      ++memo_count_;
      return;
    }
    ++memo_generation_;  // an entry may change: the fast lane's shape is no longer valid
    // A key older than the region, or a sparse one, is not in the range end_region() scans.
    if (streaming() && (key < region_.memo || key > 2 * memo_.size() + kDenseMemoSlack)) region_.keep = true;
    if (key <= 2 * memo_.size() + kDenseMemoSlack) {
      if (key >= memo_.size()) memo_.resize(key + 1, kNoNode);
      if (memo_[key] == kNoNode && (sparse_memo_.empty() || sparse_memo_.erase(key) == 0)) {
        ++memo_count_;
      }
      memo_[key] = id;
      return;
    }
    if (sparse_memo_.insert_or_assign(key, id).second) ++memo_count_;
  }
  void memo_get(uint64_t key) {
    NodeId id = key < memo_.size() ? memo_[key] : kNoNode;
    if (id == kNoNode) {
      const auto it = sparse_memo_.find(key);
      if (it == sparse_memo_.end()) {
        fail(fmt::format("{} asks for memo entry {}, which was never stored", op_name(), key));
      }
      id = it->second;
    }
    if (id == kCollapsed) fall_back("a memo get of a streamed item");
    if (streaming() && id == stream_list_) fall_back("a memo get of the streamed list");
    arena_->nodes[id].flags |= PickleNode::kShared;
    push(id);
  }
  uint64_t text_memo_key() {
    const std::string_view line = take_line();
    uint64_t key = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), key);
    if (ec != std::errc() || end != line.data() + line.size()) {
      fail(fmt::format("{} holds {}, not a memo key", op_name(), quoted(line)));
    }
    return key;
  }

  // ---- scalars
  // A two's-complement little-endian integer of n bytes (LONG1, LONG4).
  void push_long(const uint8_t* b, uint64_t n) {
    uint64_t used = 0;
    if (const auto v = small_long(b, n, used)) return push_int(*v);
    const bool negative = (b[n - 1] & 0x80) != 0;
    // Beyond int64: the magnitude (for a negative value, ~x + 1), summed as a double.
    double magnitude = 0;
    unsigned carry = negative ? 1 : 0;
    for (uint64_t i = 0; i < used; ++i) {
      const unsigned byte = (negative ? static_cast<uint8_t>(~b[i]) : b[i]) + carry;
      carry = byte >> 8;
      // Past 2^1024 a double is inf anyway: cap the exponent to keep it an int.
      const auto exponent = static_cast<int>(std::min<uint64_t>(8 * i, kMaxDoubleExponent + 8));
      magnitude += std::ldexp(static_cast<double>(byte & 0xff), exponent);
    }
    push_float(negative ? -magnitude : magnitude, PickleNode::kBigInt);
  }

  // INT and LONG in text: decimal, "00"/"01" for False/True (INT), a trailing 'L' (LONG).
  void push_text_int() {
    std::string_view line = take_line();
    if (op_ == INT && line == "00") return push(kFalseNode);
    if (op_ == INT && line == "01") return push(kTrueNode);
    if (op_ == LONG && !line.empty() && line.back() == 'L') line.remove_suffix(1);
    const char* first = line.data();
    const char* last = first + line.size();
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(first, last, v);
    if (ec == std::errc() && end == last) return push_int(v);
    if (ec == std::errc::result_out_of_range && end == last) {
      double d = 0;
      std::from_chars(first, last, d);
      return push_float(d, PickleNode::kBigInt);
    }
    fail(fmt::format("{} holds {}, not a decimal integer", op_name(), quoted(line)));
  }

  void push_text_float() {
    const std::string_view line = take_line();
    double d = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), d);
    if (ec != std::errc() || end != line.data() + line.size()) {
      fail(fmt::format("FLOAT holds {}, not a number", quoted(line)));
    }
    push_float(d);
  }

  void push_binfloat() { push_float(big_endian_double(take(8))); }

  void push_small_int(uint8_t v) {
    if (small_ints_[v] == kNoNode) {
      push_int(v);
      small_ints_[v] = stack_.back();
    } else {
      push(small_ints_[v]);
    }
  }

  // ---- strings
  void push_unicode(uint64_t n) {
    const uint8_t* s = take(n);
    const size_t valid = utf8_valid_prefix(s, n);
    if (valid != n) {
      fail(fmt::format("{} holds invalid UTF-8 at byte {}", op_name(), s + valid - begin_));
    }
    push_chars(PickleKind::kStr, s, n);
  }

  // BINSTRING, SHORT_BINSTRING: Python 2 str, read as ASCII text like Python 3's default.
  void push_py2_string(uint64_t n) {
    const uint8_t* s = take(n);
    const uint8_t* high = std::find_if(s, s + n, [](uint8_t c) { return c >= 0x80; });
    if (high != s + n) {
      fail(
          fmt::format("{} is a Python 2 str with a non-ASCII byte at byte {}; Python 3 reads such "
                      "strs as ASCII and refuses it too",
                      op_name(), high - begin_));
    }
    push_chars(PickleKind::kStr, s, n);
  }

  // UNICODE: raw-unicode-escape text. Bytes are Latin-1 code points; \uXXXX and \UXXXXXXXX are
  // escapes when an odd number of backslashes precedes the u (CPython's
  // _PyUnicode_DecodeRawUnicodeEscape).
  void push_text_unicode() {
    const std::string_view line = take_line();
    std::string& text = arena_->chars;
    const size_t start = text.size();
    for (size_t i = 0; i < line.size();) {
      const auto c = static_cast<unsigned char>(line[i]);
      if (c != '\\') {
        append_utf8(text, c);
        ++i;
        continue;
      }
      size_t run = 0;
      while (i + run < line.size() && line[i + run] == '\\') ++run;
      i += run;
      const bool escape = run % 2 == 1 && i < line.size() && (line[i] == 'u' || line[i] == 'U');
      text.append(run - (escape ? 1 : 0), '\\');
      if (escape) i = unicode_escape(line, i, text);
    }
    if (text.size() - start > kMaxCount) fail("UNICODE holds more than 4 GiB");
    const NodeId id = add_node(PickleKind::kStr);
    PickleNode& node = arena_->nodes[id];
    node.flags = PickleNode::kDecoded;
    node.at = start;
    node.size = static_cast<uint32_t>(text.size() - start);
    push(id);
  }

  // Reads the escape at line[at] ('u' or 'U' and hex digits); returns the index after it.
  size_t unicode_escape(std::string_view line, size_t at, std::string& text) const {
    const size_t digits = line[at] == 'u' ? 4 : 8;
    uint32_t cp = 0;
    const char* first = line.data() + at + 1;
    const auto [end, ec] =
        std::from_chars(first, first + std::min(digits, line.size() - at - 1), cp, 16);
    if (ec != std::errc() || end != first + digits) {
      fail(
          fmt::format("UNICODE has a truncated \\{}{} escape", line[at], std::string(digits, 'X')));
    }
    if (cp > 0x10ffff) fail(fmt::format("UNICODE has \\U{:08x}, beyond Unicode", cp));
    append_utf8(text, cp);
    return at + 1 + digits;
  }

  // ---- containers
  void push_tuple(size_t n) {
    if (stack_.size() - fence_ < n) underflow();
    push_container(PickleKind::kTuple, n);
  }
  void push_from_mark(PickleKind kind) {
    const size_t n = stack_.size() - pop_mark();
    if (kind == PickleKind::kDict && n % 2 != 0) odd_items(n);
    push_container(kind, n);
  }
  [[noreturn]] void odd_items(size_t n) const {
    fail(
        fmt::format("{} has an odd number of values after its MARK ({}); keys and values come in "
                    "pairs",
                    op_name(), n));
  }
  void append_one(PickleKind kind, size_t n) {
    if (stack_.size() - fence_ < n + 1) underflow();
    const size_t from = stack_.size() - n;
    append_from(target(from - 1, kind), from);
  }
  void append_from_mark(PickleKind kind) {
    const size_t from = pop_mark();
    if (from <= fence_) {
      fail(fmt::format("{} finds no {} below its MARK", op_name(), kind_name(kind)));
    }
    if (kind == PickleKind::kDict && (stack_.size() - from) % 2 != 0) {
      odd_items(stack_.size() - from);
    }
    append_from(target(from - 1, kind), from);
  }

  void pop_value_or_mark() {
    if (!marks_.empty() && marks_.back() == stack_.size()) {
      pop_mark();  // as CPython's load_pop: POP right after MARK drops the MARK
    } else {
      pop();
    }
  }

  void refuse_or_unknown() const {
    const OpInfo& info = kOps[op_];
    if (info.refusal == nullptr) fail(fmt::format("unknown opcode 0x{:02x}", op_));
    if (objects_ != nullptr) {
      fail(fmt::format("opcode {} (0x{:02x}) {}; plumb reads {}", info.name, op_, info.refusal,
                       objects_->reads));
    }
    fail(
        fmt::format("opcode {} (0x{:02x}) {}; plumb reads plain data only (dicts, lists, numbers, "
                    "strings)",
                    info.name, op_, info.refusal));
  }

  // ---- restricted objects (pickle.h, parse_restricted_pickle)
  void object_op() {
    if (objects_ == nullptr) refuse_or_unknown();
    switch (op_) {
      case GLOBAL: {
        const std::string_view module = take_line();
        return push_global(module, take_line());
      }
      case STACK_GLOBAL: return stack_global();
      case REDUCE: return reduce();
      case BUILD: return build();
      default: return persistent();  // BINPERSID
    }
  }

  void push_global(std::string_view module, std::string_view name) {
    const auto& globals = objects_->globals;
    for (size_t k = 0; k < globals.size(); ++k) {
      if (globals[k].module == module && globals[k].name == name) {
        const NodeId id = add_node(PickleKind::kGlobal);
        arena_->nodes[id].i = static_cast<int64_t>(k);
        return push(id);
      }
    }
    fail(fmt::format("{} {} is not allowed (plumb reads {})", op_name(),
                     quoted(fmt::format("{} {}", module, name)), objects_->reads));
  }

  // STACK_GLOBAL: the module and the name, two str on the stack.
  void stack_global() {
    if (stack_.size() - fence_ < 2) underflow();
    const PickleNode& module = arena_->nodes[stack_[stack_.size() - 2]];
    const PickleNode& name = arena_->nodes[stack_.back()];
    if (module.kind != PickleKind::kStr || name.kind != PickleKind::kStr) {
      fail(fmt::format("STACK_GLOBAL takes a module and a name as str, not a {} and a {}",
                       kind_name(module.kind), kind_name(name.kind)));
    }
    const std::string_view m = arena_->payload(module), n = arena_->payload(name);
    stack_.resize(stack_.size() - 2);
    push_global(m, n);
  }

  // REDUCE: an allowed global called with a tuple.
  void reduce() {
    if (stack_.size() - fence_ < 2) underflow();
    const NodeId function = stack_[stack_.size() - 2];
    const PickleNode& args = arena_->nodes[stack_.back()];
    const PickleNode& f = arena_->nodes[function];
    if (f.kind != PickleKind::kGlobal) {
      fail(fmt::format("REDUCE calls a {}; plumb calls only the globals it allows", kind_name(f.kind)));
    }
    if (args.kind != PickleKind::kTuple) {
      fail(fmt::format("REDUCE's arguments are a {}, not a tuple", kind_name(args.kind)));
    }
    const PickleGlobal& global = objects_->globals[static_cast<size_t>(f.i)];
    if (!global.makes_dict) return push_container(PickleKind::kCall, 2);
    if (args.size != 0) {
      fail(fmt::format("REDUCE calls {}.{} with arguments; plumb reads only the empty call that "
                       "pickle writes before the items",
                       global.module, global.name));
    }
    stack_.resize(stack_.size() - 2);
    push_container(PickleKind::kDict, 0);
    arena_->nodes[stack_.back()].flags |= PickleNode::kObjectDict;
  }

  // BUILD: the state of a dict made by an allowed global (its attributes) is dropped.
  void build() {
    if (stack_.size() - fence_ < 2) underflow();
    const PickleNode& target = arena_->nodes[stack_[stack_.size() - 2]];
    if ((target.flags & PickleNode::kObjectDict) == 0) {
      fail(fmt::format("BUILD sets the state of a {}; plumb allows it only on a dict made by an "
                       "allowed global (its attributes are dropped)",
                       kind_name(target.kind)));
    }
    stack_.pop_back();
  }

  // BINPERSID: the id, kept for the caller to resolve.
  void persistent() {
    if (stack_.size() - fence_ < 1) underflow();
    push_container(PickleKind::kPersistent, 1);
  }

  void check_protocol() {
    const uint8_t v = *take(1);
    if (v > kHighestProtocol) {
      fail(fmt::format("unsupported pickle protocol {}; plumb reads protocols 0 to {}", v,
                       kHighestProtocol));
    }
  }

  // Lengths that pickletools calls int4 are signed; a negative one is an error, as in CPython.
  uint64_t take_signed_length() {
    const auto n = static_cast<int32_t>(static_cast<uint32_t>(take_uint(4)));
    if (n < 0) fail(fmt::format("{} has a negative length, {}", op_name(), n));
    return static_cast<uint64_t>(n);
  }

  void step() {
    switch (op_) {
      case PROTO: return check_protocol();
      case FRAME: return frame();
      case MARK: return push_mark();
      case POP: return pop_value_or_mark();
      case POP_MARK: {
        const size_t mark = pop_mark();
        if (streaming()) refuse_collapsed(mark);
        return stack_.resize(mark);
      }
      case DUP: return dup();
      case NONE: return push(kNoneNode);
      case NEWTRUE: return push(kTrueNode);
      case NEWFALSE: return push(kFalseNode);
      case BININT: return push_int(static_cast<int32_t>(static_cast<uint32_t>(take_uint(4))));
      case BININT1: return push_small_int(*take(1));
      case BININT2: return push_int(static_cast<int64_t>(take_uint(2)));
      case LONG1: {
        const uint64_t n = take_uint(1);
        return push_long(take(n), n);
      }
      case LONG4: {
        const uint64_t n = take_signed_length();
        return push_long(take(n), n);
      }
      case INT:
      case LONG: return push_text_int();
      case FLOAT: return push_text_float();
      case BINFLOAT: return push_binfloat();
      case SHORT_BINUNICODE: return push_unicode(take_uint(1));
      case BINUNICODE: return push_unicode(take_uint(4));
      case BINUNICODE8: return push_unicode(take_uint(8));
      case UNICODE: return push_text_unicode();
      case SHORT_BINSTRING: return push_py2_string(take_uint(1));
      case BINSTRING: return push_py2_string(take_signed_length());
      case SHORT_BINBYTES: return push_bytes(take_uint(1));
      case BINBYTES: return push_bytes(take_uint(4));
      case BINBYTES8:
      case BYTEARRAY8: return push_bytes(take_uint(8));
      case EMPTY_LIST: return push_container(PickleKind::kList, 0);
      case EMPTY_TUPLE: return push_container(PickleKind::kTuple, 0);
      case EMPTY_DICT:
        if (fast_lane_open() && fast_item()) return;
        return push_container(PickleKind::kDict, 0);
      case LIST: return push_from_mark(PickleKind::kList);
      case TUPLE: return push_from_mark(PickleKind::kTuple);
      case DICT: return push_from_mark(PickleKind::kDict);
      case TUPLE1: return push_tuple(1);
      case TUPLE2: return push_tuple(2);
      case TUPLE3: return push_tuple(3);
      case APPEND: return append_one(PickleKind::kList, 1);
      case APPENDS: return append_from_mark(PickleKind::kList);
      case SETITEM: return append_one(PickleKind::kDict, 2);
      case SETITEMS: return append_from_mark(PickleKind::kDict);
      case BINPUT: return memo_put(take_uint(1));
      case LONG_BINPUT: return memo_put(take_uint(4));
      case PUT: return memo_put(text_memo_key());
      case MEMOIZE: return memo_put(memo_count_);
      case BINGET: return memo_get(take_uint(1));
      case LONG_BINGET: return memo_get(take_uint(4));
      case GET: return memo_get(text_memo_key());
      case GLOBAL:
      case STACK_GLOBAL:
      case REDUCE:
      case BUILD:
      case BINPERSID: return object_op();
      default: refuse_or_unknown();
    }
  }

  // FRAME: an 8-byte length, a hint for buffered reading; the frame must be there in full.
  void frame() {
    const uint64_t n = take_uint(8);
    if (n > static_cast<uint64_t>(end_ - p_)) truncated();
  }
  void dup() {
    const NodeId id = top();
    arena_->nodes[id].flags |= PickleNode::kShared;
    push(id);
  }
  void push_bytes(uint64_t n) { push_chars(PickleKind::kBytes, take(n), n); }

  // ---- streaming (pickle.h)
  bool streaming() const { return stream_list_ != kNoNode; }
  [[noreturn]] static void fall_back(const char* why) { throw PickleStreamFallback{why}; }
  static constexpr const char* kItemElsewhere = "a streamed item is used elsewhere than in its list";
  static constexpr const char* kSharedInsert =
      "an insertion into a shared container could close a cycle through a streamed item";
  // The fast lane leaves kCollapsed on the stack for each item it took; only the streamed list's
  // APPENDS may take it from there.
  void refuse_collapsed(size_t from) const {
    for (size_t i = from; i < stack_.size(); ++i) {
      if (stack_[i] == kCollapsed) fall_back(kItemElsewhere);
    }
  }
  // An older container gets values made in the region: the region must stay.
  void note_old_parent(size_t from) {
    for (size_t i = from; i < stack_.size(); ++i) {
      if (stack_[i] >= region_.nodes && stack_[i] < kCollapsed) region_.keep = true;
    }
  }

  // The innermost MARK frame holding stack position `pos`: the position of its first value.
  std::optional<size_t> frame_of(size_t pos) const {
    const auto mark = std::upper_bound(marks_.begin(), marks_.end(), pos);
    if (mark == marks_.begin()) return std::nullopt;
    return *(mark - 1);
  }
  bool is_at(size_t pos, PickleKind kind) const {
    return stack_[pos] < kCollapsed && arena_->nodes[stack_[pos]].kind == kind;
  }

  // Where a list at stack position `pos` is going as Python writes nested lists: one of a MARK
  // frame's values over a list (APPENDS), or right over a list (a single APPEND). The list's
  // position and the index.
  std::optional<std::pair<size_t, size_t>> list_place(size_t pos) const {
    const auto m = frame_of(pos);
    if (m && *m >= 1 && is_at(*m - 1, PickleKind::kList)) {
      return std::pair{*m - 1, arena_->nodes[stack_[*m - 1]].size + (pos - *m)};
    }
    if (pos >= 1 && (!m || pos - 1 >= *m) && is_at(pos - 1, PickleKind::kList)) {
      return std::pair{pos - 1, size_t{arena_->nodes[stack_[pos - 1]].size}};
    }
    return std::nullopt;
  }

  // The stack position of the key under which the value at `pos` goes into the root dict (at
  // position 0): a value of its MARK frame (SETITEMS) or the single SETITEM form.
  std::optional<size_t> root_key(size_t pos) const {
    if (!is_at(0, PickleKind::kDict)) return std::nullopt;
    const auto m = frame_of(pos);
    if (m && *m == 1 && (pos - 1) % 2 == 1) return pos - 1;
    if (!m && pos == 2) return 1;
    return std::nullopt;
  }

  // At a MARK over an empty, unshared list: is it going to root[key][index] that the sink wants?
  void maybe_stream(size_t pos) {
    const NodeId id = stack_[pos];
    if (id >= kCollapsed) return;
    const PickleNode& list = arena_->nodes[id];
    if (list.kind != PickleKind::kList || list.size != 0 || (list.flags & PickleNode::kShared) != 0) return;
    const auto outer = list_place(pos);
    if (!outer) return;
    const auto key = root_key(outer->first);
    if (!key || !is_at(*key, PickleKind::kStr)) return;
    if (!sink_->wants(arena_->payload(arena_->nodes[stack_[*key]]), outer->second)) return;
    stream_list_ = id;
    stream_pos_ = pos;
    streamed_->list = id;
    start_region();
  }

  // ---- the fast lane (pickle.h): an item dict of plain values straight from the bytes
  // Open when the stack above the streamed list holds only items the lane took (it must not take
  // an item ahead of one waiting for APPENDS: the sink sees them in order).
  bool fast_lane_open() const {
    if (!streaming() || !lane_.enabled) return false;
    const size_t base = stream_pos_ + 1;
    const bool in_batch = !marks_.empty() && marks_.back() == base;
    const bool single = stack_.size() == base && (marks_.empty() || marks_.back() < base);
    if (!in_batch && !single) return false;
    return stack_.size() == base || stack_.back() == kCollapsed;
  }

  // Which of the sink's keys the str node `id` is (-1: none); kNotAStr when it is not a str.
  // A cached key is marked kShared when cached (the ordinary way marks it too, should the item
  // fall back), so that taking an item stores nothing into the key nodes.
  static constexpr int kNotAStr = -2;
  int key_slot(NodeId id) {
    FastLane::Entry& e = lane_.cache[id % FastLane::kCache];
    if (e.node == id) return e.slot;
    PickleNode& n = arena_->nodes[id];
    if (n.kind != PickleKind::kStr) return kNotAStr;
    const std::string_view text = arena_->payload(n);
    int slot = -1;
    for (size_t k = 0; k < lane_.keys.size(); ++k) {
      if (lane_.keys[k] == text) slot = static_cast<int>(k);
    }
    n.flags |= PickleNode::kShared;
    e = {id, static_cast<int8_t>(slot)};
    return slot;
  }

  // A memo key at q (BINGET, LONG_BINGET) resolved to a live node, or kNoNode. (Not an optional:
  // GCC returns std::optional<uint32_t> through two stores and one wider load, a store-forwarding
  // stall on every call that was a tenth of plumb mem analyze.)
  NodeId fast_get(const uint8_t*& q) const {
    uint64_t key = 0;
    if (*q == BINGET && end_ - q >= 2) {
      key = q[1];
      q += 2;
    } else if (*q == LONG_BINGET && end_ - q >= 5) {
      key = little_endian(q + 1, 4);
      q += 5;
    } else {
      return kNoNode;
    }
    if (key >= memo_.size()) return kNoNode;
    const NodeId id = memo_[key];
    if (id == kCollapsed || id == stream_list_) return kNoNode;
    return id;
  }

  // A plain value at q into v: an int, float, None, bool or a memo get. Within kRoomyBytes of the
  // end of the input the item takes the ordinary way.
  static constexpr ptrdiff_t kRoomyBytes = 10;
  bool fast_value(const uint8_t*& q, FlatValue& v) const {
    if (end_ - q < kRoomyBytes) return false;
    if (*q != LONG1 || q[1] <= 8) return roomy_value(q, v);
    v.scalar = PickleNode{};  // a LONG1 of more bytes, which may still fit in int64
    v.ref = kNoNode;
    return end_ - q >= 2 + q[1] && fast_long(q, v.scalar);
  }

  // LONG1 that fits in int64 (a big int takes the ordinary way).
  static bool fast_long(const uint8_t*& q, PickleNode& n) {
    uint64_t used = 0;
    const auto v = small_long(q + 2, q[1], used);
    if (!v) return false;
    n.kind = PickleKind::kInt, n.i = *v, q += 2 + q[1];
    return true;
  }

  // The memo put after EMPTY_DICT: its key, or nullopt.
  std::optional<uint64_t> fast_put(const uint8_t*& q) const {
    if (q >= end_) return std::nullopt;
    if (*q == MEMOIZE) {
      ++q;
      return memo_count_;
    }
    if (*q == BINPUT && end_ - q >= 2) {
      q += 2;
      return q[-1];
    }
    if (*q == LONG_BINPUT && end_ - q >= 5) {
      q += 5;
      return little_endian(q - 4, 4);
    }
    return std::nullopt;
  }

  // FRAME opcodes before the next opcode at q (protocol 4 cuts the stream into 64 KiB frames,
  // wherever an opcode ends, so inside items too): skipped as frame() does. False, at the end of
  // the input or at a frame that is not there in full, which the ordinary way then reports.
  bool skip_frames(const uint8_t*& q) const {
    while (q < end_ && *q == FRAME) {
      if (end_ - q < 9 || little_endian(q + 1, 8) > static_cast<uint64_t>(end_ - q - 9)) return false;
      q += 9;
    }
    return q < end_;
  }

  // EMPTY_DICT, a memo put, MARK, (key value)*, SETITEMS — or false, nothing consumed.
  bool fast_item() { return shaped_item() || general_item(); }

  FlatValue* cleared_values() {
    FlatValue* values = lane_.values.data();  // reused: only the sink's slots are cleared
    const size_t n = lane_.keys.size();
    for (size_t k = 0; k < n; ++k) values[k].present = false;
    return values;
  }

  bool general_item() {
    const uint8_t* q = p_;
    if (!skip_frames(q)) return false;
    const auto put = fast_put(q);
    if (!put || !skip_frames(q) || *q != MARK || *put >= memo_.size() + kDenseMemoSlack) return false;
    ++q;
    FlatValue* values = cleared_values();
    // The memo gets of values, marked kShared once the item is taken (marking them as they come
    // would make the compiler reload every member after each byte-sized store).
    std::array<NodeId, FastLane::kMaxPairs> gets;
    FastLane::Shape& shape = lane_.shape;
    shape.generation = std::numeric_limits<uint64_t>::max();  // recorded again as the keys come
    size_t pairs = 0;
    for (;; ++pairs) {
      if (!skip_frames(q)) return false;
      if (*q == SETITEMS) break;
      const uint8_t* key_at = q;
      const NodeId key = fast_get(q);
      if (key == kNoNode || pairs == FastLane::kMaxPairs) return false;
      const int slot = key_slot(key);
      if (slot == kNotAStr) return false;
      record_key(pairs, key_at, static_cast<size_t>(q - key_at), static_cast<int8_t>(slot));
      if (!skip_frames(q)) return false;
      FlatValue& v = slot >= 0 ? values[static_cast<size_t>(slot)] : lane_.ignored;
      if (!fast_value(q, v)) return false;
      gets[pairs] = v.ref;
      if (!skip_frames(q)) return false;
      if (*q == MEMOIZE || *q == BINPUT || *q == LONG_BINPUT) return false;  // a plain value memoized
      v.present = true;  // the last of a repeated key stands
    }
    p_ = q + 1;
    shape.pairs = pairs;
    shape.generation = memo_generation_;
    take_fast_item(*put, values, gets.data(), pairs);
    return true;
  }

  void record_key(size_t pair, const uint8_t* at, size_t length, int8_t slot) {
    FastLane::Shape& shape = lane_.shape;
    uint64_t bytes = 0;
    std::memcpy(&bytes, at, length);
    shape.bytes[pair] = bytes;
    shape.mask[pair] = (uint64_t{1} << (8 * length)) - 1;  // length is 2 or 5
    shape.length[pair] = static_cast<uint8_t>(length);
    shape.slot[pair] = slot;
  }

  // The item, when its keys are the recorded shape's, byte for byte (no FRAME inside) and its
  // values plain: the keys' slots are known. Far enough from the end that no read needs a check:
  // an item of the shape's at most kMaxPairs pairs, each a 5-byte get and a value of at most 10
  // bytes, plus its head, fits in kShapeMargin.
  static constexpr size_t kShapeMargin = 512;
  bool shaped_item() {
    const FastLane::Shape& shape = lane_.shape;
    if (shape.generation != memo_generation_ || static_cast<size_t>(end_ - p_) < kShapeMargin) return false;
    const uint8_t* q = p_;
    uint64_t put = 0;
    if (*q == MEMOIZE) {
      put = memo_count_, q += 1;
    } else if (*q == BINPUT) {
      put = q[1], q += 2;
    } else if (*q == LONG_BINPUT) {
      put = little_endian(q + 1, 4), q += 5;
    } else {
      return false;
    }
    if (*q++ != MARK || put >= memo_.size() + kDenseMemoSlack) return false;
    FlatValue* values = cleared_values();
    std::array<NodeId, FastLane::kMaxPairs> gets;
    const size_t pairs = shape.pairs;
    for (size_t i = 0; i < pairs; ++i) {
      uint64_t word = 0;
      std::memcpy(&word, q, 8);
      if ((word & shape.mask[i]) != shape.bytes[i]) return false;
      q += shape.length[i];
      const int8_t slot = shape.slot[i];
      FlatValue& v = slot >= 0 ? values[static_cast<size_t>(slot)] : lane_.ignored;
      if (!roomy_value(q, v)) return false;
      gets[i] = v.ref;
      v.present = true;
    }
    if (*q != SETITEMS) return false;
    p_ = q + 1;
    ++streamed_->shaped;
    take_fast_item(put, values, gets.data(), pairs);
    return true;
  }

  // fast_value with kRoomyBytes at q: no length checks, LONG1 of up to 8 bytes in one load.
  bool roomy_value(const uint8_t*& q, FlatValue& v) const {
    PickleNode& n = v.scalar;
    n = PickleNode{};
    v.ref = kNoNode;
    switch (*q) {
      case BININT1: n.kind = PickleKind::kInt, n.i = q[1], q += 2; return true;
      case BININT2: n.kind = PickleKind::kInt, n.i = static_cast<int64_t>(little_endian(q + 1, 2)), q += 3; return true;
      case BININT:
        n.kind = PickleKind::kInt;
        n.i = static_cast<int32_t>(static_cast<uint32_t>(little_endian(q + 1, 4)));
        q += 5;
        return true;
      case LONG1: {
        const unsigned bytes = q[1];
        if (bytes > 8) return false;
        n.kind = PickleKind::kInt, n.i = sign_extended(q + 2, bytes), q += 2 + bytes;
        return true;
      }
      case BINFLOAT: n.kind = PickleKind::kFloat, n.d = big_endian_double(q + 1), q += 9; return true;
      case NONE: n.kind = PickleKind::kNone, ++q; return true;
      case NEWTRUE: n.kind = PickleKind::kBool, n.i = 1, ++q; return true;
      case NEWFALSE: n.kind = PickleKind::kBool, n.i = 0, ++q; return true;
      default:
        v.ref = fast_get(q);
        return v.ref != kNoNode;
    }
  }

  // The two's-complement little-endian integer of `bytes` ≤ 8 bytes at b (8 bytes readable):
  // what small_long gives for them.
  static int64_t sign_extended(const uint8_t* b, unsigned bytes) {
    if (bytes == 0) return 0;
    uint64_t word = 0;
    std::memcpy(&word, b, 8);
    const unsigned unused = 64 - 8 * bytes;
    return static_cast<int64_t>(word << unused) >> unused;
  }

  // `gets`: the value each pair got from the memo, kNoNode where none.
  void take_fast_item(uint64_t put, const FlatValue* values, const NodeId* gets, size_t pairs) {
    for (size_t i = 0; i < pairs; ++i) {
      if (gets[i] == kNoNode) continue;
      NodeId& marked = lane_.marked[gets[i] % FastLane::kCache];
      if (marked == gets[i]) continue;
      arena_->nodes[gets[i]].flags |= PickleNode::kShared;
      marked = gets[i];
    }
    memo_store(put, kCollapsed);
    stack_.push_back(kCollapsed);
    sink_->flat_item(arena_.get(), values, streamed_->items++);
  }

  void start_region() {
    region_ = Region{arena_->nodes.size(), arena_->kids.size(), arena_->chars.size(), memo_.size(),
                     shared_inserts_.size(), false};
  }

  // APPEND(S) into the streamed list: each item to the sink, then the region goes.
  void stream_items(size_t from) {
    if (streamed_->items + (stack_.size() - from) > kMaxCount) {
      fail(fmt::format("{} makes a container of more than {} items", op_name(), kMaxCount));
    }
    for (size_t i = from; i < stack_.size(); ++i) {
      if (stack_[i] == kCollapsed) continue;  // taken by the fast lane already
      arena_->nodes[stack_[i]].flags |= PickleNode::kStreamed;
      sink_->item(Value(arena_.get(), stack_[i]), streamed_->items++);
    }
    stack_.resize(from);
    if (!region_.keep && shared_inserts_.size() == region_.shared) drop_region();
    start_region();
  }

  // The region's nodes go. Memo entries into it: an item's becomes kCollapsed, any other value
  // (a key, a call stack first seen in this batch) moves down, with what it holds.
  void drop_region() {
    const auto w = static_cast<NodeId>(region_.nodes);
    Evacuation ev(*arena_, w, region_.kids, region_.chars);
    for (size_t k = region_.memo; k < memo_.size(); ++k) {
      NodeId& m = memo_[k];
      if (m == kNoNode || m == kCollapsed || m < w) continue;
      m = (arena_->nodes[m].flags & PickleNode::kStreamed) != 0 ? kCollapsed : ev.keep(m);
    }
    ev.finish();
    for (NodeId& small : small_ints_) {
      if (small != kNoNode && small >= w) small = kNoNode;
    }
    sink_->forget_nodes_from(w);
    lane_.forget();
  }

  // ---- reference cycles
  // Only an insertion into a container already shared can close a cycle (without a memo get or
  // DUP every value has one reference, so the values form a tree). When there were such
  // insertions, a depth-first search looks for a cycle and names the insertion that closed it.
  void check_cycles() const {
    if (shared_inserts_.empty()) return;
    const auto& nodes = arena_->nodes;
    std::vector<uint8_t> state(nodes.size(), 0);  // 0 unseen, 1 on the path, 2 done
    struct Step {
      NodeId id;
      uint32_t next;
    };
    std::vector<Step> path;
    for (NodeId start = 0; start < nodes.size(); ++start) {
      if (state[start] != 0 || !is_container(nodes[start].kind)) continue;
      path.push_back({start, 0});
      state[start] = 1;
      while (!path.empty()) {
        Step& s = path.back();
        if (s.next == nodes[s.id].size) {
          state[s.id] = 2;
          path.pop_back();
          continue;
        }
        const NodeId child = arena_->kids[nodes[s.id].at + s.next++];
        if (!is_container(nodes[child].kind) || state[child] == 2) continue;
        if (state[child] == 1) report_cycle(path, child);
        state[child] = 1;
        path.push_back({child, 0});
      }
    }
  }

  // The cycle is path[from child to the end] and back to child; the insertion that closed it is
  // the latest recorded one among its edges.
  template <typename Path>
  [[noreturn]] void report_cycle(const Path& path, NodeId child) const {
    std::unordered_map<uint64_t, size_t> first_insert;
    for (const SharedInsert& s : shared_inserts_) {
      first_insert.try_emplace((uint64_t{s.parent} << 32) | s.child, s.at);
    }
    size_t start = path.size() - 1;
    while (path[start].id != child) --start;
    size_t closed_at = shared_inserts_.back().at;
    bool found = false;
    for (size_t i = start; i < path.size(); ++i) {
      const NodeId to = i + 1 < path.size() ? path[i + 1].id : child;
      const auto it = first_insert.find((uint64_t{path[i].id} << 32) | to);
      if (it != first_insert.end() && (!found || it->second > closed_at)) {
        closed_at = it->second;
        found = true;
      }
    }
    fail_at(closed_at,
            fmt::format("{} makes a {} contain itself (a reference cycle); plumb reads "
                        "plain data without cycles",
                        kOps[begin_[closed_at]].name, kind_name(arena_->nodes[child].kind)));
  }

  const PickleObjects* objects_ = nullptr;  // the restricted reading's globals; null: none
  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  size_t op_at_ = 0;  // byte offset of the opcode being read
  uint8_t op_ = 0;
  std::unique_ptr<PickleArena> arena_;
  std::vector<NodeId> stack_;
  std::vector<size_t> marks_;    // stack sizes at each MARK
  size_t fence_ = 0;             // the last MARK's stack size: opcodes see the stack above it
  HugePageVector<NodeId> memo_;  // dense memo: key → node, kNoNode where unset
  std::unordered_map<uint64_t, NodeId> sparse_memo_;
  size_t memo_count_ = 0;  // distinct keys stored: MEMOIZE's key
  uint64_t memo_generation_ = 0;  // counts the memo stores that were not appends
  std::array<NodeId, 256> small_ints_{};
  std::vector<SharedInsert> shared_inserts_;
  ListSink* sink_ = nullptr;
  StreamedList* streamed_ = nullptr;
  InputWindow* window_ = nullptr;
  NodeId stream_list_ = kNoNode;
  size_t stream_pos_ = 0;  // the streamed list's stack position
  Region region_;
  FastLane lane_;
};

// "an int", "a str", "bytes", "None": what a message says was found.
std::string found_kind(PickleKind kind) {
  if (kind == PickleKind::kNone) return "None";
  if (kind == PickleKind::kBytes) return "bytes";
  return fmt::format("{} {}", kind == PickleKind::kInt ? "an" : "a", kind_name(kind));
}

PickleDoc parse_owned(std::shared_ptr<const void> owner, const char* data, size_t size,
                      const std::string& name) {
  auto arena = std::make_unique<PickleArena>();
  arena->name = name;
  arena->input = data;
  arena->input_owner = std::move(owner);
  return PickleReader(std::move(arena), size).read();
}

}  // namespace

std::string_view kind_name(PickleKind kind) {
  switch (kind) {
    case PickleKind::kNone: return "NoneType";
    case PickleKind::kBool: return "bool";
    case PickleKind::kInt: return "int";
    case PickleKind::kFloat: return "float";
    case PickleKind::kStr: return "str";
    case PickleKind::kBytes: return "bytes";
    case PickleKind::kList: return "list";
    case PickleKind::kTuple: return "tuple";
    case PickleKind::kDict: return "dict";
    case PickleKind::kGlobal: return "global";
    case PickleKind::kCall: return "call";
    case PickleKind::kPersistent: return "persistent id";
  }
  return "?";
}

void Value::wrong_kind(std::string_view expected) const {
  if (is_big_int()) {
    throw Error(fmt::format("{}: expected {}, found an int beyond 64 bits (about {:g})",
                            arena_->name, expected, node().d));
  }
  throw Error(fmt::format("{}: expected {}, found {}", arena_->name, expected, found_kind(kind())));
}

void Value::out_of_range(size_t index) const {
  throw Error(fmt::format("{}: index {} is past the end of a {} of {} items", arena_->name, index,
                          kind_name(kind()), node().size));
}

void* map_huge_pages(size_t bytes) {
  // Map 2 MiB more than needed, then trim the ends so that the block starts on a 2 MiB boundary.
  const size_t length = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* raw = ::mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto first = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = (first + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (start > first) ::munmap(raw, start - first);
  const uintptr_t tail = first + length + kHugePageBytes - (start + length);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(start + length), tail);
  advise_huge_pages(reinterpret_cast<void*>(start), length);  // a hint: may be refused
  return reinterpret_cast<void*>(start);
}

void unmap_huge_pages(void* at, size_t bytes) {
  ::munmap(at, (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes);
}

PickleDoc parse_pickle(std::string_view bytes, const std::string& name) {
  auto copy = std::make_shared<std::string>(bytes);
  const char* data = copy->data();
  return parse_owned(std::move(copy), data, bytes.size(), name);
}

PickleDoc parse_pickle(const InputBytes& input) {
  input.populate();
  return parse_owned(input.owner(), input.bytes().data(), input.bytes().size(), input.name());
}

PickleDoc read_pickle_file(const std::string& path) { return parse_pickle(load_input(path)); }

PickleDoc parse_restricted_pickle(const InputBytes& input, const PickleObjects& objects) {
  auto arena = std::make_unique<PickleArena>();
  arena->name = input.name();
  arena->input = input.bytes().data();
  arena->input_owner = input.owner();
  return PickleReader(std::move(arena), input.bytes().size(), nullptr, nullptr, nullptr, &objects)
      .read();
}

PickleDoc parse_pickle_streaming(const InputBytes& input, ListSink& sink, StreamedList& streamed) {
  auto arena = std::make_unique<PickleArena>();
  arena->name = input.name();
  arena->input = input.bytes().data();
  arena->input_owner = input.owner();
  InputWindow window(input);
  return PickleReader(std::move(arena), input.bytes().size(), &sink, &streamed, &window).read();
}

}  // namespace plumb::mem
