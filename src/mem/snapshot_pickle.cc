// Snapshots written as pickles: the snapshot layout (snapshot_convert.h) over decoded pickle
// values (pickle.h).
#include <array>
#include <iterator>
#include <limits>

#include "mem/pickle.h"
#include "mem/snapshot_convert.h"
#include "mem/snapshot_reader.h"

#include "common/huge_pages.h"
#include "common/prefault.h"
#include "mem/jsonl_reader.h"

namespace plumb::mem {
namespace {

struct PickleAdapter {
  using V = Value;
  static std::optional<V> get(const V& v, const char* key) {
    if (!v.is(PickleKind::kDict)) return std::nullopt;
    return v.get(key);
  }
  static bool is_list(const V& v) { return v.is(PickleKind::kList) || v.is(PickleKind::kTuple); }
  static bool is_dict(const V& v) { return v.is(PickleKind::kDict); }
  static bool is_text(const V& v) { return v.is(PickleKind::kStr); }
  static bool is_bool(const V& v) { return v.is(PickleKind::kBool); }
  static bool is_none(const V& v) { return v.is(PickleKind::kNone); }
  static bool is_integer(const V& v) { return v.is(PickleKind::kInt); }
  static bool is_number(const V& v) { return v.is(PickleKind::kInt) || v.is(PickleKind::kFloat); }
  static size_t size(const V& v) { return v.size(); }
  // A node shared by several parents (the pickle memo) is one node: its id names it.
  static std::optional<uint64_t> identity(const V& v) { return v.id(); }
  static V at(const V& v, size_t i) { return v[i]; }
  static int64_t integer(const V& v) { return v.as_int(); }
  static double number(const V& v) { return v.as_double(); }
  static std::string text(const V& v) { return v.is(PickleKind::kStr) ? std::string(v.as_str()) : ""; }
  static bool boolean(const V& v) { return v.as_bool(); }
  static std::string scalar_text(const V& v) {
    switch (v.kind()) {
      case PickleKind::kStr: return std::string(v.as_str());
      case PickleKind::kInt: return std::to_string(v.as_int());
      case PickleKind::kFloat: return fmt::format("{}", v.as_double());
      case PickleKind::kBool: return v.as_bool() ? "true" : "false";
      case PickleKind::kNone: return "null";
      default: return std::string(kind_name(v.kind()));
    }
  }
  template <class F>
  static void for_each_item(const V& v, F&& f) {
    for (const PickleEntry& e : v.entries()) {
      if (e.key.is(PickleKind::kStr)) f(std::string(e.key.as_str()), e.value);
    }
  }
  static void event_fields(const V& v, convert::EventFields<V>& f) {
    for (const PickleEntry& e : v.entries()) {
      if (!e.key.is(PickleKind::kStr)) continue;
      if (std::optional<V>* slot = f.slot(e.key.as_str())) *slot = e.value;
    }
  }
  static bool action(const V& v, Action& out) { return action_from_name(v.as_str(), out); }
};

// The fast lane's view of an event (pickle.h, FlatValue): the event itself is `flat`, its values
// plain scalars or document nodes; for nodes everything is PickleAdapter's.
struct FlatV {
  const PickleArena* arena = nullptr;
  NodeId ref = std::numeric_limits<NodeId>::max();
  PickleNode scalar;
  const FlatValue* flat = nullptr;

  bool is_node() const { return ref != std::numeric_limits<NodeId>::max(); }
  Value node() const { return Value(arena, ref); }
  PickleKind kind() const { return is_node() ? arena->nodes[ref].kind : scalar.kind; }
};

// The keys of an event the fast lane looks for, in EventFields' order.
constexpr std::string_view kEventKeys[] = {"action", "addr", "size", "device_free", "stream", "time_us", "frames"};

struct FlatAdapter {
  using V = FlatV;
  static V wrap(const PickleArena* arena, const Value& v) { return V{arena, v.id(), {}, nullptr}; }
  static std::optional<V> get(const V& v, const char* key) {
    if (!v.is_node()) return std::nullopt;  // the event itself is read through event_fields
    const auto got = PickleAdapter::get(v.node(), key);
    if (!got) return std::nullopt;
    return wrap(v.arena, *got);
  }
  static bool is_list(const V& v) { return v.kind() == PickleKind::kList || v.kind() == PickleKind::kTuple; }
  static bool is_dict(const V& v) { return v.flat != nullptr || v.kind() == PickleKind::kDict; }
  static bool is_text(const V& v) { return v.flat == nullptr && v.kind() == PickleKind::kStr; }
  static bool is_bool(const V& v) { return v.flat == nullptr && v.kind() == PickleKind::kBool; }
  static bool is_none(const V& v) { return v.flat == nullptr && v.kind() == PickleKind::kNone; }
  static bool is_integer(const V& v) { return v.flat == nullptr && v.kind() == PickleKind::kInt; }
  static bool is_number(const V& v) {
    return v.flat == nullptr && (v.kind() == PickleKind::kInt || v.kind() == PickleKind::kFloat);
  }
  static size_t size(const V& v) { return v.node().size(); }
  static std::optional<uint64_t> identity(const V& v) {
    if (!v.is_node()) return std::nullopt;
    return v.ref;
  }
  static V at(const V& v, size_t i) { return wrap(v.arena, v.node()[i]); }
  static int64_t integer(const V& v) { return v.is_node() ? v.node().as_int() : v.scalar.i; }
  static double number(const V& v) {
    if (v.is_node()) return v.node().as_double();
    return v.scalar.kind == PickleKind::kFloat ? v.scalar.d : static_cast<double>(v.scalar.i);
  }
  static std::string text(const V& v) { return is_text(v) ? std::string(v.node().as_str()) : ""; }
  static bool boolean(const V& v) { return v.is_node() ? v.node().as_bool() : v.scalar.i != 0; }
  static void event_fields(const V& v, convert::EventFields<V>& f) {
    std::optional<V>* slots[] = {&f.action, &f.addr, &f.size, &f.device_free, &f.stream, &f.time_us, &f.frames};
    for (size_t k = 0; k < std::size(slots); ++k) {
      const FlatValue& x = v.flat[k];
      if (x.present) *slots[k] = V{v.arena, x.ref, x.scalar, nullptr};
    }
  }
  static bool action(const V& v, Action& out) { return action_from_name(v.node().as_str(), out); }
};

// The common event of the fast lane without the adapters: every value of a kind read_event
// accepts, the action a known name, the frames a list converted before. Anything else is left to
// read_event, which takes or refuses it with its messages; the trace is the same either way
// (tests/mem/snapshot_stream_test.cc and fuzz/snapshot_stream_fuzz.cc compare the two readers).
// Node ids are reused once the reader drops a region: forget() empties the caches.
class DirectEvents {
 public:
  bool take(const PickleArena* arena, const FlatValue* v, TraceBuilder& b) {
    Event e;
    uint64_t device_free = 0;
    bool timed = false;
    if (!action(arena, v[kAction], e.action)) return false;
    const bool no_addr = e.action == Action::kOom || e.action == Action::kSnapshot;
    if (!count(v[kAddr], !no_addr, e.addr) || !count(v[kSize], e.action != Action::kSnapshot, e.size) ||
        !count(v[kDeviceFree], false, device_free) || !time(v[kTime], e.time_us, timed) ||
        !stack(arena, v[kFrames], b, e.stack) || !stream(v[kStream], b, e.stream)) {
      return false;
    }
    b.device_free(device_free);
    if (timed) b.trace().has_time = true;
    b.trace().events.push_back(e);
    return true;
  }

  void forget() {
    actions_.fill({kNone, Action::kAlloc});
    stacks_.fill({kNone, kNoStack});
  }

 private:
  enum Slot { kAction, kAddr, kSize, kDeviceFree, kStream, kTime, kFrames };  // kEventKeys' order
  static constexpr NodeId kNone = std::numeric_limits<NodeId>::max();
  static constexpr size_t kCache = 64;

  static bool is_scalar(const FlatValue& x, PickleKind kind) { return x.ref == kNone && x.scalar.kind == kind; }
  static bool absent(const FlatValue& x) { return !x.present || is_scalar(x, PickleKind::kNone); }

  bool action(const PickleArena* arena, const FlatValue& x, Action& out) {
    if (!x.present || x.ref == kNone || arena->nodes[x.ref].kind != PickleKind::kStr) return false;
    auto& [node, action] = actions_[x.ref % kCache];
    if (node != x.ref) {
      if (!action_from_name(Value(arena, x.ref).as_str(), action)) return false;
      node = x.ref;
    }
    out = action;
    return true;
  }
  // A non-negative int, or nothing where it may be absent (None is not absent here: read_event
  // refuses it).
  static bool count(const FlatValue& x, bool required, uint64_t& out) {
    if (!x.present) return !required;
    if (!is_scalar(x, PickleKind::kInt) || x.scalar.i < 0) return false;
    out = static_cast<uint64_t>(x.scalar.i);
    return true;
  }
  static bool time(const FlatValue& x, double& out, bool& timed) {
    if (absent(x)) return true;
    if (is_scalar(x, PickleKind::kInt)) {
      out = static_cast<double>(x.scalar.i);
    } else if (is_scalar(x, PickleKind::kFloat)) {
      out = x.scalar.d;
    } else {
      return false;
    }
    timed = true;
    return true;
  }
  bool stack(const PickleArena* arena, const FlatValue& x, TraceBuilder& b, uint32_t& out) {
    if (absent(x)) return true;  // out stays kNoStack
    if (x.ref == kNone) return false;
    const PickleKind kind = arena->nodes[x.ref].kind;
    if (kind != PickleKind::kList && kind != PickleKind::kTuple) return false;
    auto& [node, id] = stacks_[x.ref % kCache];
    if (node != x.ref) {
      const auto it = b.stack_by_node().find(x.ref);
      if (it == b.stack_by_node().end()) return false;  // new frames: read_event converts them
      node = x.ref;
      id = it->second;
    }
    out = id;
    return true;
  }
  static bool stream(const FlatValue& x, TraceBuilder& b, uint16_t& out) {
    if (absent(x)) return true;
    if (!is_scalar(x, PickleKind::kInt)) return false;
    if (x.scalar.i == 0) return true;  // out stays 0: stream 0 is Trace::streams[0]
    const auto id = b.stream(x.scalar.i);
    if (!id) return false;
    out = *id;
    return true;
  }

  std::array<std::pair<NodeId, Action>, kCache> actions_ = filled<Action>(Action::kAlloc);
  std::array<std::pair<NodeId, uint32_t>, kCache> stacks_ = filled<uint32_t>(kNoStack);

  template <class T>
  static std::array<std::pair<NodeId, T>, kCache> filled(T value) {
    std::array<std::pair<NodeId, T>, kCache> a;
    a.fill({kNone, value});
    return a;
  }
};

// The events of device_traces[device], converted as the streaming reader hands them over.
class EventSink : public ListSink {
 public:
  EventSink(convert::StreamedEvents& out, const std::string& name, int device, size_t bytes,
            size_t helpers_from)
      : out_(out), name_(name), device_(device) {
    // Untouched capacity costs address space only; a snapshot's event is 50 bytes or more.
    std::vector<Event>& events = out_.builder.trace().events;
    events.reserve(bytes / kMinEventBytes + 1024);
    advise_huge_pages(events.data(), events.capacity() * sizeof(Event));
    if (bytes >= helpers_from) {
      ahead_.emplace(events);
      validator_.emplace(out_.builder.trace(), name_, device_);
      out_.validator = &*validator_;
    }
  }
  // The events did not come from the streamed list after all: read_events converts them.
  void not_streamed() {
    if (validator_) validator_->abandon();
  }
  bool wants(std::string_view key, size_t index) const override {
    return key == "device_traces" && index == static_cast<size_t>(device_);
  }
  void item(Value v, size_t index) override {
    if (out_.error) return;  // the conversion stops at the first bad event, as the tree's does
    before_push();
    try {
      convert::read_event<PickleAdapter>(v, convert::EventAt{&name_, device_, index}, out_.builder);
    } catch (const Error& e) {
      out_.error = e.what();
    }
    pushed();
  }
  void forget_nodes_from(NodeId first) override {
    out_.builder.forget_nodes_from(first);
    direct_.forget();
  }
  std::vector<std::string_view> fast_keys() const override {
    return {std::begin(kEventKeys), std::end(kEventKeys)};
  }
  void flat_item(const PickleArena* arena, const FlatValue* values, size_t index) override {
    if (out_.error) return;
    before_push();
    if (!direct_.take(arena, values, out_.builder)) {
      try {
        convert::read_event<FlatAdapter>(FlatV{arena, std::numeric_limits<NodeId>::max(), {}, values},
                                         convert::EventAt{&name_, device_, index}, out_.builder);
      } catch (const Error& e) {
        out_.error = e.what();
      }
    }
    pushed();
  }

 private:
  static constexpr size_t kMinEventBytes = 32;
  static constexpr size_t kPublishEvery = 16384;

  // An event is about to be appended: the validator must not read the events as they move.
  void before_push() {
    std::vector<Event>& events = out_.builder.trace().events;
    if (validator_ && events.size() == events.capacity()) validator_->abandon();
  }
  void pushed() {
    if (ahead_) ahead_->pushed();
    if (validator_ && out_.builder.trace().events.size() % kPublishEvery == 0) validator_->publish();
  }

  convert::StreamedEvents& out_;
  const std::string& name_;
  int device_;
  DirectEvents direct_;
  std::optional<PrefaultAhead<std::vector<Event>>> ahead_;
  std::optional<StreamValidator> validator_;
};

Trace from_doc(const PickleDoc& doc, const std::string& name, int device) {
  Trace t = convert::snapshot<PickleAdapter>(doc.root(), name, device);
  t.source = name + " (snapshot, pickle)";
  return t;
}

}  // namespace

Trace snapshot_from_pickle_bytes(const std::string& bytes, const std::string& name, int device) {
  return snapshot_from_pickle(input_from_string(bytes, name), device);
}

Trace snapshot_from_pickle_tree(const InputBytes& input, int device) {
  return from_doc(parse_pickle(input), input.name(), device);
}

Trace snapshot_from_pickle(const InputBytes& input, int device, size_t helpers_from) {
  try {
    convert::StreamedEvents streamed;
    StreamedList list;
    EventSink sink(streamed, input.name(), device, input.bytes().size(), helpers_from);
    const PickleDoc doc = parse_pickle_streaming(input, sink, list);
    if (list.chosen()) {
      streamed.list = list.list;
    } else {
      sink.not_streamed();
    }
    Trace t = convert::snapshot<PickleAdapter>(doc.root(), input.name(), device, &streamed);
    t.source = input.name() + " (snapshot, pickle)";
    return t;
  } catch (const PickleStreamFallback&) {
    // A layout the streaming reader does not take (pickle.h): the whole tree, as before.
    return snapshot_from_pickle_tree(input, device);
  }
}

Trace snapshot_from_pickle_file(const std::string& path, int device) {
  return snapshot_from_pickle(load_input(path), device);
}

}  // namespace plumb::mem
