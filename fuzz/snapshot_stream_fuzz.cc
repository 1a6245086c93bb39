// libFuzzer target: any bytes as a snapshot, read by the streaming reader (pickle.h "Streaming";
// the JSON SAX reader; a pickle also with the helper threads) and by the reader that builds the
// whole document first. All must say the same: the same trace, field by field, or the same
// message. A difference aborts.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "common/error.h"
#include "mem/input.h"
#include "mem/snapshot_reader.h"

namespace {

using namespace plumb::mem;

struct Outcome {
  std::optional<Trace> trace;
  std::string error;
};

template <class F>
Outcome outcome(F&& read) {
  try {
    return {read(), ""};
  } catch (const plumb::Error& e) {
    return {std::nullopt, e.what()};
  }
}

bool same_event(const Trace& a, const Event& x, const Trace& b, const Event& y) {
  const bool time = (std::isnan(x.time_us) && std::isnan(y.time_us)) || x.time_us == y.time_us;
  return time && x.addr == y.addr && x.size == y.size && x.stack == y.stack && x.action == y.action &&
         a.stream_of(x) == b.stream_of(y);
}

bool same(const Trace& a, const Trace& b) {
  if (a.events.size() != b.events.size() || a.segments.size() != b.segments.size() ||
      a.frames.size() != b.frames.size() || a.stacks != b.stacks || a.streams != b.streams ||
      a.allocator_settings != b.allocator_settings || a.device_free.size() != b.device_free.size() ||
      a.has_time != b.has_time || a.source != b.source) {
    return false;
  }
  for (size_t i = 0; i < a.events.size(); ++i) {
    if (!same_event(a, a.events[i], b, b.events[i])) return false;
  }
  for (size_t i = 0; i < a.frames.size(); ++i) {
    if (a.frames[i].name != b.frames[i].name || a.frames[i].filename != b.frames[i].filename ||
        a.frames[i].line != b.frames[i].line) {
      return false;
    }
  }
  for (size_t i = 0; i < a.segments.size(); ++i) {
    if (a.segments[i].addr != b.segments[i].addr || a.segments[i].blocks.size() != b.segments[i].blocks.size()) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const InputBytes input = input_from_string(std::string(reinterpret_cast<const char*>(data), size), "f");
  const bool pickle = size > 0 && data[0] == 0x80;
  const Outcome streamed = outcome([&] { return pickle ? snapshot_from_pickle(input, 0) : read_trace(input, 0); });
  const Outcome tree = outcome([&]() -> Trace {
    if (pickle) return snapshot_from_pickle_tree(input, 0);
    std::optional<Trace> t = snapshot_from_json_tree(input, 0);
    if (!t) throw plumb::Error("f: not a memory trace: neither a pickle, JSON, nor plumb.mem-events/1 lines");
    return std::move(*t);
  });
  // read_trace also takes event lines and refuses memory_stats() dumps: only snapshots compare.
  const bool json_snapshot = !pickle && tree.trace.has_value();
  if (!pickle && !json_snapshot) return 0;
  if (streamed.error != tree.error) std::abort();
  if (streamed.trace.has_value() != tree.trace.has_value()) std::abort();
  if (streamed.trace && !same(*streamed.trace, *tree.trace)) std::abort();
  if (!pickle) return 0;
  // With its helper threads (faulting pages in ahead, validating on a thread of its own), which
  // start only on large files otherwise.
  const Outcome helped = outcome([&] { return snapshot_from_pickle(input, 0, 0); });
  if (helped.error != tree.error || helped.trace.has_value() != tree.trace.has_value()) std::abort();
  if (helped.trace && !same(*helped.trace, *tree.trace)) std::abort();
  return 0;
}
