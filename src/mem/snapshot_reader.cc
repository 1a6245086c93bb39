#include "mem/snapshot_reader.h"

#include <fmt/format.h>

#include <iterator>
#include <optional>
#include <utility>

#include "common/error.h"
#include "common/json.h"
#include "mem/jsonl_reader.h"
#include "mem/pickle.h"
#include "mem/snapshot_convert.h"
#include "mem/stats_reader.h"

namespace plumb::mem {
namespace {

using nlohmann::json;

// The snapshot layout's view of a JSON document (pointers into it: no copies).
struct JsonAdapter {
  using V = const json*;
  static std::optional<V> get(V v, const char* key) {
    if (!v->is_object()) return std::nullopt;
    const auto it = v->find(key);
    if (it == v->end()) return std::nullopt;
    return &*it;
  }
  static bool is_list(V v) { return v->is_array(); }
  static bool is_dict(V v) { return v->is_object(); }
  static bool is_text(V v) { return v->is_string(); }
  static bool is_bool(V v) { return v->is_boolean(); }
  static bool is_none(V v) { return v->is_null(); }
  static bool is_integer(V v) { return v->is_number_integer(); }
  static bool is_number(V v) { return v->is_number(); }
  static size_t size(V v) { return v->size(); }
  static std::optional<uint64_t> identity(V) { return std::nullopt; }  // JSON shares nothing
  static V at(V v, size_t i) { return &(*v)[i]; }
  static int64_t integer(V v) {
    return v->is_number_unsigned() ? static_cast<int64_t>(v->get<uint64_t>()) : v->get<int64_t>();
  }
  static double number(V v) { return v->get<double>(); }
  static std::string text(V v) { return v->is_string() ? v->get<std::string>() : std::string(); }
  static bool boolean(V v) { return v->get<bool>(); }
  static std::string scalar_text(V v) { return v->is_string() ? v->get<std::string>() : v->dump(); }
  template <class F>
  static void for_each_item(V v, F&& f) {
    for (const auto& [key, value] : v->items()) f(key, &value);
  }
  static void event_fields(V v, convert::EventFields<V>& f) {
    for (const auto& [key, value] : v->items()) {
      if (std::optional<V>* slot = f.slot(key)) *slot = &value;
    }
  }
  static bool action(V v, Action& out) { return action_from_name(v->get_ref<const std::string&>(), out); }
};

bool looks_like_jsonl(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  const size_t end = text.find('\n', first);
  std::string problem;  // not event lines, whatever it is
  const json line = parse_json_or_discarded(
      text.substr(first, end == std::string::npos ? std::string::npos : end - first), problem);
  return !line.is_discarded() && line.is_object() && !line.contains("device_traces") &&
         !line.contains("segments");
}

// A mapped file read front to back by nlohmann's parser, which takes iterators: every 1 MiB the
// window (mem/input.h) moves on.
class WindowedChars {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  WindowedChars() = default;
  WindowedChars(const char* at, const char* begin, InputWindow* window) : at_(at), begin_(begin), window_(window) {}
  reference operator*() const { return *at_; }
  WindowedChars& operator++() {
    ++at_;
    if ((static_cast<size_t>(at_ - begin_) & kEvery) == 0) window_->at(static_cast<size_t>(at_ - begin_));
    return *this;
  }
  WindowedChars operator++(int) {
    WindowedChars before = *this;
    ++*this;
    return before;
  }
  bool operator==(const WindowedChars& other) const { return at_ == other.at_; }

 private:
  static constexpr size_t kEvery = (size_t{1} << 20) - 1;
  const char* at_ = nullptr;
  const char* begin_ = nullptr;
  InputWindow* window_ = nullptr;
};

// nlohmann's SAX events into a document, except the items of device_traces[device]: each is
// built alone, converted into an event and dropped (the document keeps an empty list there).
class SnapshotSax {
 public:
  SnapshotSax(convert::StreamedEvents& out, const std::string& name, int device)
      : out_(out), name_(name), device_(device) {}

  json& document() { return root_; }

  bool null() { return value(json(nullptr)); }
  bool boolean(bool b) { return value(json(b)); }
  bool number_integer(json::number_integer_t v) { return value(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return value(json(v)); }
  bool number_float(json::number_float_t v, const std::string&) { return value(json(v)); }
  bool string(std::string& v) { return value(json(std::move(v))); }
  bool binary(json::binary_t& v) { return value(json(std::move(v))); }
  bool start_object(size_t) { return open(json::object()); }
  bool start_array(size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    key_ = std::move(k);
    if (stack_.size() == 1 && key_ == "device_traces" && std::exchange(seen_traces_, true)) {
      throw PickleStreamFallback{"device_traces twice"};  // the document keeps the last one
    }
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  enum class Level : uint8_t { kPlain, kTraces, kEvents, kItem };

  // Where a new value goes: into the item being built, the document, or it is an item itself.
  json* slot() {
    if (stack_.empty()) return &root_;
    json& top = *stack_.back().at;
    if (top.is_object()) return &top[key_];
    return &top.emplace_back();
  }
  Level level_of_new(const json& v) const {
    if (stack_.empty()) return Level::kPlain;
    const Level parent = stack_.back().level;
    if (parent == Level::kItem || parent == Level::kEvents) return Level::kItem;
    if (stack_.size() == 1 && key_ == "device_traces" && v.is_array()) return Level::kTraces;
    if (parent == Level::kTraces && v.is_array() && stack_.back().at->size() == static_cast<size_t>(device_)) {
      return Level::kEvents;
    }
    return Level::kPlain;
  }
  bool value(json v) {
    if (!stack_.empty() && stack_.back().level == Level::kEvents) {
      convert_item(v);
      return true;
    }
    *slot() = std::move(v);
    return true;
  }
  bool open(json v) {
    if (stack_.size() >= kMaxJsonDepth) {  // what the document parse_json reads would refuse
      throw Error(fmt::format("{}: JSON nested deeper than {} levels", name_, kMaxJsonDepth));
    }
    const Level level = level_of_new(v);
    if (level == Level::kItem && stack_.back().level == Level::kEvents) {
      item_ = std::move(v);
      stack_.push_back({&item_, level});
      return true;
    }
    json* at = slot();
    *at = std::move(v);
    stack_.push_back({at, level});
    if (level == Level::kEvents) out_.by_path = true;
    return true;
  }
  bool close() {
    const Frame done = stack_.back();
    stack_.pop_back();
    if (done.at == &item_) convert_item(item_);
    return true;
  }
  void convert_item(const json& item) {
    const size_t index = items_++;
    if (out_.error) return;  // the conversion stops at the first bad event, as the whole document's does
    try {
      convert::read_event<JsonAdapter>(&item, convert::EventAt{&name_, device_, index}, out_.builder);
    } catch (const Error& e) {
      out_.error = e.what();
    }
  }

  struct Frame {
    json* at;
    Level level;
  };
  convert::StreamedEvents& out_;
  const std::string& name_;
  int device_;
  json root_;
  json item_;
  std::vector<Frame> stack_;
  std::string key_;
  size_t items_ = 0;
  bool seen_traces_ = false;
};

// The JSON form, its events streamed; nullopt when it is not JSON at all.
std::optional<Trace> snapshot_from_json_stream(const InputBytes& input, int device) {
  convert::StreamedEvents streamed;
  SnapshotSax sax(streamed, input.name(), device);
  InputWindow window(input);
  const std::string_view text = input.bytes();
  const WindowedChars first(text.data(), text.data(), &window);
  const WindowedChars last(text.data() + text.size(), text.data(), &window);
  if (!json::sax_parse(first, last, &sax)) return std::nullopt;
  const json* doc = &sax.document();
  Trace t = convert::snapshot<JsonAdapter>(doc, input.name(), device, &streamed);
  t.source = input.name() + " (snapshot, JSON)";
  return t;
}

}  // namespace

Trace snapshot_from_json(const json& doc, const std::string& name, int device) {
  Trace t = convert::snapshot<JsonAdapter>(&doc, name, device);
  t.source = name + " (snapshot, JSON)";
  return t;
}

std::optional<Trace> snapshot_from_json_tree(const InputBytes& input, int device) {
  input.populate();
  std::string problem;
  const json doc = parse_json_or_discarded(input.bytes(), problem);
  if (doc.is_discarded()) {
    if (json_depth_exceeded(input.bytes())) throw Error(input.name() + ": " + problem);
    return std::nullopt;  // not JSON at all
  }
  return snapshot_from_json(doc, input.name(), device);
}

Trace read_trace(const InputBytes& input, int device) {
  const std::string_view text = input.bytes();
  const std::string& path = input.name();
  if (!text.empty() && static_cast<unsigned char>(text[0]) == 0x80) {  // PROTO: a pickle
    return snapshot_from_pickle(input, device);
  }
  // memory_stats() dumps are JSON objects per line too: recognised first, by their keys.
  if (looks_like_memory_stats(text)) {
    throw Error(fmt::format("{}: periodic memory_stats() dumps, not an allocator trace: expected a "
                            "snapshot or plumb.mem-events/1 lines", path));
  }
  if (looks_like_jsonl(text)) {
    input.populate();
    return parse_events_jsonl(text, path);
  }
  std::optional<Trace> streamed;
  try {
    streamed = snapshot_from_json_stream(input, device);
  } catch (const PickleStreamFallback&) {
    streamed = snapshot_from_json_tree(input, device);
  }
  if (!streamed) {
    throw Error(fmt::format("{}: not a memory trace: neither a pickle, JSON, nor plumb.mem-events/1 lines", path));
  }
  return std::move(*streamed);
}

Trace read_trace(const std::string& path, int device) { return read_trace(load_input(path), device); }

}  // namespace plumb::mem
