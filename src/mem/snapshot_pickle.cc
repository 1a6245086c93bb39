// Snapshots written as pickles: the snapshot layout (snapshot_convert.h) over decoded pickle
// values (pickle.h).
#include <iterator>
#include <limits>

#include "mem/pickle.h"
#include "mem/snapshot_convert.h"
#include "mem/snapshot_reader.h"

#include "common/huge_pages.h"
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

// The events of device_traces[device], converted as the streaming reader hands them over.
class EventSink : public ListSink {
 public:
  EventSink(convert::StreamedEvents& out, const std::string& name, int device, size_t bytes)
      : out_(out), name_(name), device_(device) {
    // Untouched capacity costs address space only; a snapshot's event is 50 bytes or more.
    out_.builder.trace().events.reserve(bytes / kMinEventBytes + 1024);
    advise_huge_pages(out_.builder.trace().events.data(), out_.builder.trace().events.capacity() * sizeof(Event));
  }
  bool wants(std::string_view key, size_t index) const override {
    return key == "device_traces" && index == static_cast<size_t>(device_);
  }
  void item(Value v, size_t index) override {
    if (out_.error) return;  // the conversion stops at the first bad event, as the tree's does
    try {
      convert::read_event<PickleAdapter>(v, convert::EventAt{&name_, device_, index}, out_.builder);
    } catch (const Error& e) {
      out_.error = e.what();
    }
  }
  void forget_nodes_from(NodeId first) override { out_.builder.forget_nodes_from(first); }
  std::vector<std::string_view> fast_keys() const override {
    return {std::begin(kEventKeys), std::end(kEventKeys)};
  }
  void flat_item(const PickleArena* arena, const FlatValue* values, size_t index) override {
    if (out_.error) return;
    try {
      convert::read_event<FlatAdapter>(FlatV{arena, std::numeric_limits<NodeId>::max(), {}, values},
                                       convert::EventAt{&name_, device_, index}, out_.builder);
    } catch (const Error& e) {
      out_.error = e.what();
    }
  }

 private:
  static constexpr size_t kMinEventBytes = 32;
  convert::StreamedEvents& out_;
  const std::string& name_;
  int device_;
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

Trace snapshot_from_pickle(const InputBytes& input, int device) {
  try {
    convert::StreamedEvents streamed;
    StreamedList list;
    EventSink sink(streamed, input.name(), device, input.bytes().size());
    const PickleDoc doc = parse_pickle_streaming(input, sink, list);
    if (list.chosen()) streamed.list = list.list;
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
