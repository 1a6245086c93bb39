// libFuzzer target: any bytes as one rank's Kineto trace file (plain or gzip) through the trace
// input, the Chrome-trace scanner and the Kineto reader. Bad input must end in plumb::Error;
// anything else (a crash, another exception, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "step/kineto_reader.h"
#include "step/trace_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    plumb::step::TraceText text = plumb::step::trace_text_from_bytes(bytes, "rank-0.json");
    (void)plumb::step::kineto_from_text(text, plumb::step::ReadOptions{});
  } catch (const plumb::Error&) {
  }
  return 0;
}
