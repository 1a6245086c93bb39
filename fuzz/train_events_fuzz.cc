// libFuzzer target: any bytes as one plumb.train-events/1 line. Parsing must return or throw
// plumb::Error (never another exception); what it returns is within the schema's ranges and
// exporter/value_bounds.h's bounds (no busbw above 1e14 B/s, no layer plumb comm does not know).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/error.h"
#include "exporter/train_events.h"
#include "exporter/value_bounds.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::exporter::TrainEvent event = plumb::exporter::parse_train_event(line);
    namespace ex = plumb::exporter;
    if (event.step < 0 || event.step > ex::kMaxStep ||
        !(event.step_seconds >= ex::kMinTimedSeconds && event.step_seconds <= ex::kMaxStepSeconds)) {
      std::abort();
    }
    for (const ex::TrainCollective& c : event.collectives) {
      if (c.ranks < 1 || c.ranks > ex::kMaxRanks || !(c.seconds >= ex::kMinTimedSeconds) ||
          !(c.busbw_bytes_per_second >= 0 &&
            c.busbw_bytes_per_second <= ex::kMaxBandwidthBytesPerSecond) ||
          ex::layer_problem(c.layer, "layer")) {
        std::abort();
      }
    }
  } catch (const plumb::Error&) {
  }
  return 0;
}
