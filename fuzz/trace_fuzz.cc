// libFuzzer target: any bytes as one rank's Kineto trace file (plain or gzip) through the trace
// input, the Chrome-trace scanner, the Kineto reader (times of the wrong type refused, damaged
// device events dropped; a trace without device events read as a CPU run), the set check that
// turns the dropped events into notes, and, for the legacy profiler's array form, the clock
// line-up of a second rank made from the first (its times shifted). Bad input must end in
// plumb::Error; anything else (a crash, another exception, a sanitizer report) is a
// bug, and so is a kept device span that does not end after it starts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "step/clocks.h"
#include "step/kineto_reader.h"
#include "step/trace_input.h"
#include "step/trace_set.h"

// How far the second rank's collectives end from the first's: the shift line_up_own_clocks must
// find and apply without overflowing.
constexpr int64_t kOtherClockNs = 5'505'000;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    plumb::step::TraceText text = plumb::step::trace_text_from_bytes(bytes, "rank-0.json");
    plumb::step::RankTrace trace = plumb::step::kineto_from_text(text, plumb::step::ReadOptions{});
    for (const plumb::step::DeviceSpan& span : trace.spans) {
      if (span.end_ns <= span.start_ns) std::abort();
    }
    std::vector<plumb::step::RankTrace> set;
    set.push_back(std::move(trace));
    std::vector<std::string> notes;
    (void)plumb::step::check_trace_set(set, "ProfilerStep#(\\d+)", notes);
    if (set.front().own_clock) {
      plumb::step::RankTrace other = set.front();
      other.rank = 1;
      for (plumb::step::CollectiveCall& call : other.calls) {
        if (__builtin_add_overflow(call.end_ns, kOtherClockNs, &call.end_ns)) {
          call.end_ns = std::numeric_limits<int64_t>::max();
        }
      }
      set.push_back(std::move(other));
      plumb::step::line_up_own_clocks(set, notes);
      for (const plumb::step::DeviceSpan& span : set.back().spans) {
        if (span.end_ns <= span.start_ns) std::abort();
      }
    }
  } catch (const plumb::Error&) {
  }
  return 0;
}
