// The Chrome trace-event JSON both PyTorch's profiler (Kineto) and torch_npu's trace_view.json
// write: one streaming pass over `traceEvents` (or a top-level array), handing each event to a
// callback with the fields plumb reads already decoded. Readers (kineto_reader, ascend_reader)
// decide what the events mean.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "step/trace_input.h"

namespace plumb::step {

// The `args` members any reader uses; a member the event lacks keeps its default (-1 / empty).
// String views point into scratch space valid only during the callback.
struct ChromeArgs {
  int64_t correlation = -1;
  int64_t external_id = -1;   // "External id"
  int64_t device = -1;
  int64_t stream = -1;        // Kineto "stream"; Ascend "Physic Stream Id" / "stream id"
  std::string_view collective_name;  // "Collective name"
  int64_t in_nelems = -1;     // "In msg nelems"
  int64_t out_nelems = -1;    // "Out msg nelems"
  int64_t group_size = -1;    // "Group size"
  std::string_view dtype;     // "dtype"; Ascend HCCL op "data_type"
  std::string_view pg_name;   // "Process Group Name"
  std::string_view pg_ranks;  // "Process Group Ranks": "[0, 1, 2]"
  int64_t seq = -1;           // "Seq": the group's collective sequence number (PyTorch ≥ 2.4)
  int64_t count = -1;         // Ascend HCCL op "count" (elements)
  std::string_view task_type; // Ascend "Task Type"
};

struct ChromeEvent {
  char ph = 0;                // 'X', 'B', 'E', 'i', 'M', 'C', 's', 'f', ...
  std::string_view cat;
  std::string_view name;
  int64_t pid = 0;            // numbers or numeric strings; a non-numeric string hashes stably
  int64_t tid = 0;
  int64_t ts_ns = 0;          // as written (µs → ns exactly, from the decimal text), not rebased
  int64_t dur_ns = -1;        // -1 when the event has no "dur"
  ChromeArgs args;
  std::string_view process_or_thread_name;  // ph 'M' process_name/thread_name: args.name
};

// What the file says outside traceEvents (members may come before or after it).
struct ChromeTraceHeader {
  std::optional<int64_t> base_time_ns;  // "baseTimeNanoseconds": add to every ts_ns
  std::optional<int> rank;              // distributedInfo.rank
  std::optional<int> world_size;        // distributedInfo.world_size
  std::string host;                     // "host_name" when present
  // distributedInfo.pg_config: process group name → its global ranks.
  std::vector<std::pair<std::string, std::vector<int>>> process_groups;
};

// Scans `text` once, calling `on_event` for each element of traceEvents. Malformed JSON, a
// truncated file or a wrongly typed field throws plumb::Error naming `text.source` and the byte
// offset ("rank-3.json: byte 38: the JSON ends inside traceEvents: the file is truncated");
// exit 2.
ChromeTraceHeader scan_chrome_trace(const TraceText& text,
                                    const std::function<void(const ChromeEvent&)>& on_event);

// "1736408883731508.790" or 4458677009853.422 (µs) → integer ns, exactly from the decimal digits
// (rounded half up past the third fractional digit). nullopt when `text` is not a number.
std::optional<int64_t> microseconds_text_to_ns(std::string_view text);

}  // namespace plumb::step
