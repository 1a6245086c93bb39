// A metric source of `plumb exporter`: one strategy per kind (the nvidia-smi and npu-smi
// fallbacks, the training events file, the active comm probe), each behind this interface and
// registered in the exporter's table. The exporter calls collect() on a thread of the source's
// own at its interval and keeps the last good result, so that a slow or failing source never
// blocks a scrape (exporter.h).
#pragma once

#include <string>

#include "exporter/metrics.h"

namespace plumb::exporter {

class Source {
 public:
  virtual ~Source() = default;
  // The `source` label of the exporter's own series about it: "nvidia-smi", "npu-smi", "events",
  // "probe".
  virtual std::string name() const = 0;
  // Seconds between two collect() calls.
  virtual double interval_seconds() const = 0;
  // One collection. May take up to the source's own time limit; throws plumb::Error with a
  // one-line message ("nvidia-smi: no answer within 5 s", "npu-smi info: line 7: ...") when it
  // fails: the exporter then keeps the previous families, counts the error and logs the message.
  // A device the tool does not report is absent from the result, never 0.
  virtual Families collect() = 0;
};

}  // namespace plumb::exporter
