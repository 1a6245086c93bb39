// The snapshot layout read once, for any document type: `V` is a view of a JSON value or of a
// decoded pickle, reached through the small adapter `A` (get, size, at, integer, text, ...).
// Internal to the snapshot readers.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/error.h"
#include "common/huge_pages.h"
#include "mem/jsonl_reader.h"
#include "mem/trace.h"
#include "mem/validate.h"

namespace plumb::mem::convert {

// Where an event sits, formatted only for a message.
struct EventAt {
  const std::string* name;
  int device;
  size_t index;
};
inline std::string where_text(const EventAt& w) {
  return fmt::format("{}: device_traces[{}][{}]", *w.name, w.device, w.index);
}
inline const std::string& where_text(const std::string& w) { return w; }

// An optional field: absent or None (null) is nothing; another kind than `is` accepts is refused,
// naming the field.
template <class A, class V, class W, class Is>
std::optional<V> optional_field(const V& entry, const char* key, const W& where, Is is,
                                const char* expected) {
  auto v = A::get(entry, key);
  if (!v || A::is_none(*v)) return std::nullopt;
  if (!is(*v)) throw Error(fmt::format("{}: '{}' must be {}", where_text(where), key, expected));
  return v;
}

template <class A, class V, class W>
std::optional<V> integer_field(const V& entry, const char* key, const W& where) {
  return optional_field<A>(entry, key, where, [](const V& x) { return A::is_integer(x); }, "an integer");
}

template <class A, class V>
uint32_t frame_of(const V& f, const EventAt& where, TraceBuilder& b) {
  const auto node = A::identity(f);
  if (node) {
    if (const auto it = b.frame_by_node().find(*node); it != b.frame_by_node().end()) return it->second;
  }
  if (!A::is_dict(f)) {
    throw Error(fmt::format("{}: each of 'frames' must be a dict {{name, filename, line}}", where_text(where)));
  }
  const auto is_text = [](const V& x) { return A::is_text(x); };
  Frame frame;
  if (auto v = optional_field<A>(f, "name", where, is_text, "a string")) frame.name = A::text(*v);
  if (auto v = optional_field<A>(f, "filename", where, is_text, "a string")) frame.filename = A::text(*v);
  if (auto v = integer_field<A>(f, "line", where)) {
    const int64_t line = A::integer(*v);
    if (line < 0 || line > INT32_MAX) {
      throw Error(fmt::format("{}: a frame's 'line' {} is not a line number", where_text(where), line));
    }
    frame.line = static_cast<int>(line);
  }
  const uint32_t id = b.frame(std::move(frame));
  if (node) b.frame_by_node().emplace(*node, id);
  return id;
}

// The stack of an event; a frames list shared by several events (a pickle's memo) is read once.
template <class A, class V>
uint32_t stack_of(const V& entry, const EventAt& where, TraceBuilder& b) {
  const auto frames = A::get(entry, "frames");
  if (!frames || !A::is_list(*frames)) return kNoStack;
  const auto node = A::identity(*frames);
  if (node) {
    if (const auto it = b.stack_by_node().find(*node); it != b.stack_by_node().end()) return it->second;
  }
  std::vector<uint32_t> ids;
  const size_t n = A::size(*frames);
  ids.reserve(n);
  for (size_t i = 0; i < n; ++i) ids.push_back(frame_of<A>(A::at(*frames, i), where, b));
  const uint32_t id = b.stack(ids);
  if (node) b.stack_by_node().emplace(*node, id);
  return id;
}

template <class A, class V, class W>
uint64_t field(const V& entry, const char* key, const W& where, bool required) {
  const auto v = A::get(entry, key);
  if (!v) {
    if (required) throw Error(fmt::format("{}: missing '{}'", where_text(where), key));
    return 0;
  }
  if (!A::is_integer(*v) || A::integer(*v) < 0) {
    throw Error(fmt::format("{}: '{}' must be a non-negative integer", where_text(where), key));
  }
  return static_cast<uint64_t>(A::integer(*v));
}

template <class A, class V>
void read_event(const V& entry, const EventAt& where, TraceBuilder& b) {
  const auto action = A::get(entry, "action");
  if (!action || !A::is_text(*action)) throw Error(fmt::format("{}: missing 'action'", where_text(where)));
  Event e;
  const std::string name = A::text(*action);
  if (!action_from_name(name, e.action)) {
    throw Error(fmt::format("{}: unknown action '{}'", where_text(where), name));
  }
  const bool no_addr = e.action == Action::kOom || e.action == Action::kSnapshot;
  e.addr = field<A>(entry, "addr", where, !no_addr);
  e.size = field<A>(entry, "size", where, e.action != Action::kSnapshot);
  b.device_free(field<A>(entry, "device_free", where, false));
  if (auto s = integer_field<A>(entry, "stream", where)) {
    const auto stream = b.stream(A::integer(*s));
    if (!stream) throw Error(fmt::format("{}: {}", where_text(where), kStreamsMessage));
    e.stream = *stream;
  }
  if (auto t = optional_field<A>(entry, "time_us", where, [](const V& x) { return A::is_number(x); }, "a number")) {
    e.time_us = A::number(*t);
    b.trace().has_time = true;
  }
  optional_field<A>(entry, "frames", where, [](const V& x) { return A::is_list(x); }, "a list of frames");
  e.stack = stack_of<A>(entry, where, b);
  b.trace().events.push_back(e);
}

template <class A, class V>
BlockState block_state(const V& block, const std::string& where) {
  const auto s = A::get(block, "state");
  const std::string state = s && A::is_text(*s) ? A::text(*s) : "";
  if (state == "active_allocated") return BlockState::kActiveAllocated;
  if (state == "active_pending_free" || state == "active_awaiting_free") return BlockState::kActivePendingFree;
  if (state == "inactive") return BlockState::kInactive;
  throw Error(fmt::format("{}: block state '{}': expected active_allocated, active_pending_free or inactive",
                          where, state));
}

template <class A, class V>
void read_segment(const V& s, const std::string& where, TraceBuilder& b) {
  Segment seg;
  seg.addr = field<A>(s, "address", where, true);
  seg.total_size = field<A>(s, "total_size", where, true);
  if (auto v = integer_field<A>(s, "stream", where)) seg.stream = A::integer(*v);
  if (auto v = optional_field<A>(s, "segment_type", where, [](const V& x) { return A::is_text(x); }, "a string")) {
    seg.large = A::text(*v) != "small";
  }
  if (auto v = optional_field<A>(s, "is_expandable", where, [](const V& x) { return A::is_bool(x); }, "a bool")) {
    seg.expandable = A::boolean(*v);
  }
  if (auto blocks = A::get(s, "blocks"); blocks && A::is_list(*blocks)) {
    for (size_t i = 0; i < A::size(*blocks); ++i) {
      const V bl = A::at(*blocks, i);
      const std::string at = fmt::format("{}.blocks[{}]", where, i);
      Block block;
      block.addr = field<A>(bl, "address", at, true);
      block.size = field<A>(bl, "size", at, true);
      block.requested_size = field<A>(bl, "requested_size", at, false);
      block.state = block_state<A>(bl, at);
      seg.blocks.push_back(block);
    }
  }
  b.trace().segments.push_back(std::move(seg));
}

template <class A, class V>
void read_settings(const V& root, Trace& t) {
  const auto settings = A::get(root, "allocator_settings");
  if (!settings || !A::is_dict(*settings)) return;
  A::for_each_item(*settings, [&](const std::string& key, const V& value) {
    t.allocator_settings[key] = A::scalar_text(value);
  });
}

// device_traces[device] and the segments of `device` into a trace.
template <class A, class V>
Trace snapshot(const V& root, const std::string& name, int device) {
  if (!A::is_dict(root) || (!A::get(root, "device_traces") && !A::get(root, "segments"))) {
    throw Error(fmt::format("{}: not a memory snapshot: expected a dict with 'segments' and "
                            "'device_traces' (torch.cuda.memory._snapshot())", name));
  }
  TraceBuilder b;
  b.trace().device = device;
  if (auto traces = A::get(root, "device_traces")) {
    if (!A::is_list(*traces)) throw Error(fmt::format("{}: 'device_traces' must be a list", name));
    if (static_cast<size_t>(device) >= A::size(*traces)) {
      throw Error(fmt::format("{}: no trace for device {} ({} device(s) in the snapshot)", name, device,
                              A::size(*traces)));
    }
    const V events = A::at(*traces, static_cast<size_t>(device));
    const size_t n = A::size(events);
    b.trace().events.reserve(n);
    advise_huge_pages(b.trace().events.data(), n * sizeof(Event));
    for (size_t i = 0; i < n; ++i) read_event<A>(A::at(events, i), EventAt{&name, device, i}, b);
  }
  if (auto segments = A::get(root, "segments"); segments && A::is_list(*segments)) {
    for (size_t i = 0; i < A::size(*segments); ++i) {
      const V s = A::at(*segments, i);
      const auto d = A::get(s, "device");
      if (d && A::is_integer(*d) && A::integer(*d) != device) continue;
      read_segment<A>(s, fmt::format("{}: segments[{}]", name, i), b);
    }
  }
  read_settings<A>(root, b.trace());
  if (b.trace().events.empty() && b.trace().segments.empty()) {
    throw Error(fmt::format("{}: the snapshot holds no segments and no trace events for device {} "
                            "(was torch.cuda.memory._record_memory_history() enabled?)", name, device));
  }
  validate_trace(b.trace(), name);
  return b.finish();
}

}  // namespace plumb::mem::convert
