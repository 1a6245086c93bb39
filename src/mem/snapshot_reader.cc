#include "mem/snapshot_reader.h"

#include <fmt/format.h>

#include <optional>

#include "common/error.h"
#include "mem/jsonl_reader.h"
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
};

bool looks_like_jsonl(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  const size_t end = text.find('\n', first);
  const json line = json::parse(text.substr(first, end == std::string::npos ? std::string::npos : end - first),
                                nullptr, false);
  return !line.is_discarded() && line.is_object() && !line.contains("device_traces") &&
         !line.contains("segments");
}

}  // namespace

Trace snapshot_from_json(const json& doc, const std::string& name, int device) {
  Trace t = convert::snapshot<JsonAdapter>(&doc, name, device);
  t.source = name + " (snapshot, JSON)";
  return t;
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
  if (looks_like_jsonl(text)) return parse_events_jsonl(text, path);
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    throw Error(fmt::format("{}: not a memory trace: neither a pickle, JSON, nor plumb.mem-events/1 lines", path));
  }
  return snapshot_from_json(doc, path, device);
}

Trace read_trace(const std::string& path, int device) { return read_trace(load_input(path), device); }

}  // namespace plumb::mem
