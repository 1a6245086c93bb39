// libFuzzer target: any bytes as one plumb.train-events/1 line. Parsing must return or throw
// plumb::Error (never another exception); what it returns is within the schema's ranges.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/error.h"
#include "exporter/train_events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::exporter::TrainEvent event = plumb::exporter::parse_train_event(line);
    if (event.step < 0 || !(event.step_seconds > 0) || !std::isfinite(event.step_seconds)) {
      std::abort();
    }
    for (const plumb::exporter::TrainCollective& c : event.collectives) {
      if (c.ranks < 1 || !(c.seconds > 0) || c.busbw_bytes_per_second < 0) std::abort();
    }
  } catch (const plumb::Error&) {
  }
  return 0;
}
