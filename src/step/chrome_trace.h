// The Chrome trace-event JSON both PyTorch's profiler (Kineto) and torch_npu's trace_view.json
// write: one streaming pass over `traceEvents` (or a top-level array), handing each event to a
// callback with the fields plumb reads already decoded. Readers (kineto_reader, ascend_reader)
// decide what the events mean.
#pragma once

#include <cstddef>
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

// How an event's "ts" or "dur" was written. The scanner refuses nothing here: which forms a
// reader takes is its own rule (Kineto writes numbers; torch_npu writes "ts" as a string of 19
// digits), checked by require_times() on the events it uses (docs/step.md, "Damaged input").
enum class TimeForm : uint8_t {
  kMissing,     // no such member
  kNumber,      // 12.5
  kString,      // "12.5": a string holding a number
  kNull,        // null
  kOutOfRange,  // a number (or numeric string) past ±9.2e15 µs, what int64 ns hold
  kOther,       // any other string, true/false, an object or an array
};

struct TimeMember {
  TimeForm form = TimeForm::kMissing;
  int64_t ns = 0;         // the value for kNumber and kString (µs → ns exactly); else 0
  std::string_view text;  // as written, for messages: "12" with its quotes, null, 1e99; "an object"
};

struct ChromeEvent {
  char ph = 0;                // 'X', 'B', 'E', 'i', 'M', 'C', 's', 'f', ...
  std::string_view cat;
  std::string_view name;
  int64_t pid = 0;            // numbers or numeric strings; a non-numeric string hashes stably
  int64_t tid = 0;
  int64_t ts_ns = 0;          // ts.ns: as written (µs → ns exactly), not rebased
  int64_t dur_ns = 0;         // dur.ns; 0 when the event has none (see dur.form)
  TimeMember ts;
  TimeMember dur;
  uint64_t index = 0;         // the event's position in traceEvents, from 0 (jq's .traceEvents[N])
  ChromeArgs args;
  std::string_view process_or_thread_name;  // ph 'M' process_name/thread_name: args.name
};

// "event 1234 ('ncclKernel_AllReduce_RING_LL_Sum_f…')": where an event is, for messages; long
// names are cut (at a character boundary) after kShownNameBytes.
inline constexpr size_t kShownNameBytes = 40;
std::string describe_event(const ChromeEvent& event);

// The forms of "ts" a reader takes besides a JSON number.
enum class StringTs : uint8_t { kRefused, kAccepted };

// Checks the time members of an event the reader uses: "ts" a JSON number (or, with
// StringTs::kAccepted, a string holding one) and, with `with_dur`, "dur" a JSON number. Anything
// else throws plumb::Error, exit 2, naming the file, the event and what was found:
//   rank1.json: event 1234 ('ncclKernel_AllReduce…'): 'dur' is a string ("12"), expected a
//   number of µs
// Values (a negative "dur", say) are the reader's to judge.
void require_times(const ChromeEvent& event, std::string_view source, bool with_dur,
                   StringTs string_ts);

// Throws plumb::Error "<source>: event N ('name'): <what>", exit 2.
[[noreturn]] void fail_event(const ChromeEvent& event, std::string_view source,
                             std::string_view what);

// -3000 → "-3.000": integer ns as µs with three decimals, exactly, for messages.
std::string ns_as_us(int64_t ns);

// What the file says outside traceEvents (members may come before or after it).
struct ChromeTraceHeader {
  std::optional<int64_t> base_time_ns;  // "baseTimeNanoseconds": add to every ts_ns
  std::optional<int> rank;              // distributedInfo.rank
  std::optional<int> world_size;        // distributedInfo.world_size
  std::string host;                     // "host_name" when present
  // distributedInfo.pg_config: process group name → its global ranks.
  std::vector<std::pair<std::string, std::vector<int>>> process_groups;
  // The file is a bare array of events, not an object: what PyTorch's legacy autograd profiler
  // writes (PyTorch built without Kineto, as Debian 12's 1.13), its times counted from the
  // profiler's start.
  bool bare_array = false;
};

// Scans `text` once, calling `on_event` for each element of traceEvents. Malformed JSON, a
// truncated file or a wrongly typed field (other than "ts" and "dur", see TimeMember) throws
// plumb::Error naming `text.source` and the byte offset ("rank-3.json: byte 38: the JSON ends
// inside traceEvents: the file is truncated"); exit 2.
ChromeTraceHeader scan_chrome_trace(const TraceText& text,
                                    const std::function<void(const ChromeEvent&)>& on_event);

// "1736408883731508.790" or 4458677009853.422 (µs) → integer ns, exactly from the decimal digits
// (rounded half up past the third fractional digit). nullopt when `text` is not a number.
std::optional<int64_t> microseconds_text_to_ns(std::string_view text);

}  // namespace plumb::step
