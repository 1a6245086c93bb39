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
#include "mem/pickle.h"
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
std::optional<V> optional_field(const std::optional<V>& v, const char* key, const W& where, Is is,
                                const char* expected) {
  if (!v || A::is_none(*v)) return std::nullopt;
  if (!is(*v)) throw Error(fmt::format("{}: '{}' must be {}", where_text(where), key, expected));
  return v;
}
template <class A, class V, class W, class Is>
std::optional<V> optional_field(const V& entry, const char* key, const W& where, Is is,
                                const char* expected) {
  return optional_field<A>(A::get(entry, key), key, where, is, expected);
}

template <class A, class V, class W>
std::optional<V> integer_field(const std::optional<V>& v, const char* key, const W& where) {
  return optional_field<A>(v, key, where, [](const V& x) { return A::is_integer(x); }, "an integer");
}
template <class A, class V, class W>
std::optional<V> integer_field(const V& entry, const char* key, const W& where) {
  return integer_field<A>(A::get(entry, key), key, where);
}

// The fields of an event, found in one pass over its keys (the last of a repeated key, as get()).
template <class V>
struct EventFields {
  std::optional<V> action, addr, size, device_free, stream, time_us, frames;

  std::optional<V>* slot(std::string_view key) {
    switch (key.size()) {
      case 4: return key == "addr" ? &addr : key == "size" ? &size : nullptr;
      case 6: return key == "action" ? &action : key == "stream" ? &stream : key == "frames" ? &frames : nullptr;
      case 7: return key == "time_us" ? &time_us : nullptr;
      case 11: return key == "device_free" ? &device_free : nullptr;
      default: return nullptr;
    }
  }
};

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
  if (node) b.remember_frame(*node, id);
  return id;
}

// The stack of an event; a frames list shared by several events (a pickle's memo) is read once.
template <class A, class V>
uint32_t stack_of(const std::optional<V>& frames, const EventAt& where, TraceBuilder& b) {
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
  if (node) b.remember_stack(*node, id);
  return id;
}

template <class A, class V, class W>
uint64_t field(const std::optional<V>& v, const char* key, const W& where, bool required) {
  if (!v) {
    if (required) throw Error(fmt::format("{}: missing '{}'", where_text(where), key));
    return 0;
  }
  if (!A::is_integer(*v) || A::integer(*v) < 0) {
    throw Error(fmt::format("{}: '{}' must be a non-negative integer", where_text(where), key));
  }
  return static_cast<uint64_t>(A::integer(*v));
}
template <class A, class V, class W>
uint64_t field(const V& entry, const char* key, const W& where, bool required) {
  return field<A>(A::get(entry, key), key, where, required);
}

template <class A, class V>
void read_event(const V& entry, const EventAt& where, TraceBuilder& b) {
  EventFields<V> f;
  if (A::is_dict(entry)) A::event_fields(entry, f);
  if (!f.action || !A::is_text(*f.action)) throw Error(fmt::format("{}: missing 'action'", where_text(where)));
  Event e;
  if (!A::action(*f.action, e.action)) {
    throw Error(fmt::format("{}: unknown action '{}'", where_text(where), A::text(*f.action)));
  }
  const bool no_addr = e.action == Action::kOom || e.action == Action::kSnapshot;
  e.addr = field<A>(f.addr, "addr", where, !no_addr);
  e.size = field<A>(f.size, "size", where, e.action != Action::kSnapshot);
  b.device_free(field<A>(f.device_free, "device_free", where, false));
  if (auto s = integer_field<A>(f.stream, "stream", where)) {
    const auto stream = b.stream(A::integer(*s));
    if (!stream) throw Error(fmt::format("{}: {}", where_text(where), kStreamsMessage));
    e.stream = *stream;
  }
  if (auto t = optional_field<A>(f.time_us, "time_us", where, [](const V& x) { return A::is_number(x); }, "a number")) {
    e.time_us = A::number(*t);
    b.trace().has_time = true;
  }
  optional_field<A>(f.frames, "frames", where, [](const V& x) { return A::is_list(x); }, "a list of frames");
  e.stack = stack_of<A>(f.frames, where, b);
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

// Events converted while the document was read (a streaming reader: pickle.h, the JSON SAX
// reader), held until the rest of the document is converted in the usual order.
struct StreamedEvents {
  TraceBuilder builder;
  std::optional<uint64_t> list;      // the identity of the list they came from (a pickle node)
  bool by_path = false;              // or: they came from device_traces[device] itself (JSON)
  std::optional<std::string> error;  // the first bad event's message: the conversion stopped there
  StreamValidator* validator = nullptr;  // checking them as they came (else validate_trace)
};

// The events of device_traces[device]: converted here, or already (streamed). A streamed list
// that is not the one the document ends with there means the speculation failed.
template <class A, class V>
void read_events(const V& events, const std::string& name, int device, TraceBuilder& b,
                 const StreamedEvents* streamed) {
  if (streamed != nullptr && (streamed->by_path || streamed->list)) {
    if (!streamed->by_path && A::identity(events) != streamed->list) {
      throw PickleStreamFallback{"device_traces[device] is not the streamed list"};
    }
    if (streamed->error) throw Error(*streamed->error);
    return;
  }
  const size_t n = A::size(events);
  b.trace().events.reserve(n);
  advise_huge_pages(b.trace().events.data(), n * sizeof(Event));
  for (size_t i = 0; i < n; ++i) read_event<A>(A::at(events, i), EventAt{&name, device, i}, b);
}

// device_traces[device] and the segments of `device` into a trace.
template <class A, class V>
Trace snapshot(const V& root, const std::string& name, int device, StreamedEvents* streamed = nullptr) {
  if (!A::is_dict(root) || (!A::get(root, "device_traces") && !A::get(root, "segments"))) {
    throw Error(fmt::format("{}: not a memory snapshot: expected a dict with 'segments' and "
                            "'device_traces' (torch.cuda.memory._snapshot())", name));
  }
  TraceBuilder local;
  TraceBuilder& b = streamed != nullptr ? streamed->builder : local;
  b.trace().device = device;
  if (auto traces = A::get(root, "device_traces")) {
    if (!A::is_list(*traces)) throw Error(fmt::format("{}: 'device_traces' must be a list", name));
    if (static_cast<size_t>(device) >= A::size(*traces)) {
      throw Error(fmt::format("{}: no trace for device {} ({} device(s) in the snapshot)", name, device,
                              A::size(*traces)));
    }
    read_events<A>(A::at(*traces, static_cast<size_t>(device)), name, device, b, streamed);
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
  if (streamed != nullptr && streamed->validator != nullptr) {
    streamed->validator->finish();
  } else {
    validate_trace(b.trace(), name);
  }
  return b.finish();
}

}  // namespace plumb::mem::convert
