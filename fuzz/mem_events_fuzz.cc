// libFuzzer target: any bytes as plumb.mem-events/1 lines, then the whole analysis of what was
// read. Reading must succeed or throw plumb::Error; the analysis must never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "mem/analysis.h"
#include "mem/jsonl_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::mem::Trace trace = plumb::mem::parse_events_jsonl(text, "fuzz.jsonl");
    static const plumb::mem::AnalyzeOptions options;  // its regexes compiled once
    plumb::mem::analyze(trace, options);
  } catch (const plumb::Error&) {
    // a clear message for the user: fine
  }
  return 0;
}
