#include "mem/jsonl_reader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>

#include "common/error.h"
#include "common/json.h"
#include "mem/input.h"
#include "mem/validate.h"

namespace plumb::mem {
namespace {

using nlohmann::json;

struct Line {
  const std::string& name;
  size_t number;
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}:{}: {}", name, number, what));
  }
};

uint64_t unsigned_field(const json& j, const char* key, const Line& at, bool required) {
  const auto it = j.find(key);
  if (it == j.end()) {
    if (required) at.fail(fmt::format("missing '{}'", key));
    return 0;
  }
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
    at.fail(fmt::format("'{}' must be a non-negative integer", key));
  }
  return it->get<uint64_t>();
}

// An integer field that may be absent (then `fallback`); a float or a string is an error, not a
// conversion (nlohmann converts 7.8e21 to int with undefined behaviour).
int64_t integer_field(const json& j, const char* key, int64_t fallback, const Line& at) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (it->is_number_unsigned() && it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(it->get<uint64_t>());
  }
  if (!it->is_number_integer() || it->is_number_unsigned()) {
    at.fail(fmt::format("'{}' must be an integer", key));
  }
  return it->get<int64_t>();
}

int small_integer_field(const json& j, const char* key, const Line& at) {
  const int64_t v = integer_field(j, key, 0, at);
  if (v < INT32_MIN || v > INT32_MAX) at.fail(fmt::format("'{}' is out of range", key));
  return static_cast<int>(v);
}

std::string text_field(const json& j, const char* key, const char* fallback, const Line& at) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_string()) at.fail(fmt::format("'{}' must be a string, not {}", key, it->type_name()));
  return it->get<std::string>();
}

bool bool_field(const json& j, const char* key, const Line& at) {
  const auto it = j.find(key);
  if (it == j.end()) return false;
  if (!it->is_boolean()) at.fail(fmt::format("'{}' must be true or false, not {}", key, it->type_name()));
  return it->get<bool>();
}

uint32_t read_stack(const json& frames, TraceBuilder& b, const Line& at) {
  if (!frames.is_array()) at.fail("'frames' must be a list of {name, filename, line}");
  std::vector<uint32_t> ids;
  ids.reserve(frames.size());
  for (const json& f : frames) {
    if (!f.is_object()) at.fail("each frame must be an object {name, filename, line}");
    Frame frame;
    frame.name = text_field(f, "name", "", at);
    frame.filename = text_field(f, "filename", "", at);
    frame.line = small_integer_field(f, "line", at);
    ids.push_back(b.frame(std::move(frame)));
  }
  return b.stack(ids);
}

BlockState block_state(const std::string& s, const Line& at) {
  if (s == "active_allocated") return BlockState::kActiveAllocated;
  if (s == "active_pending_free" || s == "active_awaiting_free") return BlockState::kActivePendingFree;
  if (s == "inactive") return BlockState::kInactive;
  at.fail(fmt::format("block state '{}': expected active_allocated, active_pending_free or inactive", s));
}

void read_segment(const json& j, TraceBuilder& b, const Line& at) {
  if (!j.is_object()) at.fail("'segment' must be an object");
  Segment seg;
  seg.addr = unsigned_field(j, "address", at, true);
  seg.total_size = unsigned_field(j, "total_size", at, true);
  seg.stream = integer_field(j, "stream", 0, at);
  seg.large = text_field(j, "segment_type", "large", at) != "small";
  seg.expandable = bool_field(j, "is_expandable", at);
  const auto blocks = j.find("blocks");
  if (blocks != j.end() && !blocks->is_array()) at.fail("'blocks' must be a list of {address, size, state}");
  for (const json& bl : blocks == j.end() ? json::array() : *blocks) {
    if (!bl.is_object()) at.fail("each block must be an object {address, size, state}");
    Block block;
    block.addr = unsigned_field(bl, "address", at, true);
    block.size = unsigned_field(bl, "size", at, true);
    block.requested_size = unsigned_field(bl, "requested_size", at, false);
    block.state = block_state(text_field(bl, "state", "inactive", at), at);
    seg.blocks.push_back(block);
  }
  b.trace().segments.push_back(std::move(seg));
}

void read_event(const json& j, TraceBuilder& b, const Line& at) {
  const auto action = j.find("action");
  if (action == j.end() || !action->is_string()) at.fail("missing 'action' (or 'segment')");
  const std::string name = action->get<std::string>();
  Trace& t = b.trace();
  if (name == "step") {
    t.step_marks.push_back(t.events.size());
    return;
  }
  Event e;
  if (!action_from_name(name, e.action)) {
    at.fail(fmt::format("unknown action '{}': expected alloc, free_requested, free_completed, "
                        "segment_alloc, segment_free, segment_map, segment_unmap, snapshot, oom, "
                        "workspace_snapshot or step", name));
  }
  e.addr = unsigned_field(j, "addr", at, e.action != Action::kOom && e.action != Action::kSnapshot);
  e.size = unsigned_field(j, "size", at, e.action != Action::kSnapshot);
  b.device_free(unsigned_field(j, "device_free", at, false));
  const auto stream = b.stream(integer_field(j, "stream", 0, at));
  if (!stream) at.fail(kStreamsMessage);
  e.stream = *stream;
  if (const auto time = j.find("time_us"); time != j.end()) {
    if (!time->is_number()) at.fail(fmt::format("'time_us' must be a number, not {}", time->type_name()));
    e.time_us = time->get<double>();
    t.has_time = true;
  }
  if (const auto frames = j.find("frames"); frames != j.end()) e.stack = read_stack(*frames, b, at);
  t.events.push_back(e);
  t.event_lines.push_back(static_cast<uint32_t>(std::min<size_t>(at.number, UINT32_MAX)));
}

}  // namespace

bool action_from_name(std::string_view name, Action& out) {
  static constexpr std::pair<std::string_view, Action> kActions[] = {
      {"alloc", Action::kAlloc},
      {"free_requested", Action::kFreeRequested},
      {"free_completed", Action::kFreeCompleted},
      {"segment_alloc", Action::kSegmentAlloc},
      {"segment_free", Action::kSegmentFree},
      {"segment_map", Action::kSegmentMap},
      {"segment_unmap", Action::kSegmentUnmap},
      {"snapshot", Action::kSnapshot},
      {"oom", Action::kOom},
      {"workspace_snapshot", Action::kWorkspaceSnapshot}};
  for (const auto& [n, a] : kActions) {
    if (n == name) {
      out = a;
      return true;
    }
  }
  return false;
}

Trace parse_events_jsonl(std::string_view text, const std::string& name) {
  TraceBuilder b;
  b.trace().source = name + " (plumb.mem-events/1)";
  size_t number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    const Line at{name, number};
    const size_t first = raw.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || raw[first] == '#') continue;
    std::string problem;
    json j = parse_json_or_discarded(raw, problem);
    if (j.is_discarded()) at.fail(problem);
    if (!j.is_object()) at.fail("expected a JSON object");
    try {
      if (const auto seg = j.find("segment"); seg != j.end()) {
        read_segment(*seg, b, at);
      } else if (j.contains("device") && !j.contains("action")) {
        b.trace().device = small_integer_field(j, "device", at);
      } else {
        read_event(j, b, at);
      }
    } catch (const json::exception&) {
      // Every field is checked by type above: this is a net, never library text in a message.
      at.fail("a field has the wrong type");
    }
  }
  if (b.trace().events.empty() && b.trace().segments.empty()) {
    throw Error(fmt::format("{}: no allocator events", name));
  }
  validate_trace(b.trace(), name);
  return b.finish();
}

Trace read_events_jsonl(const std::string& path) {
  const InputBytes input = load_input(path);
  input.populate();
  return parse_events_jsonl(input.bytes(), input.name());
}

}  // namespace plumb::mem
