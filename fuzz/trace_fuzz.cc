// libFuzzer target: any bytes as one rank's Kineto trace file (plain or gzip) through the trace
// input, the Chrome-trace scanner, the Kineto reader (times of the wrong type refused, damaged
// device events dropped) and the set check that turns the dropped events into notes. Bad input
// must end in plumb::Error; anything else (a crash, another exception, a sanitizer report) is a
// bug, and so is a kept device span that does not end after it starts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "step/kineto_reader.h"
#include "step/trace_input.h"
#include "step/trace_set.h"

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
  } catch (const plumb::Error&) {
  }
  return 0;
}
