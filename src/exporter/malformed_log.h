// What a source refused as malformed — a training events line, a probe row, a device tool's value
// that no device can report — counted, and logged at most once per kLogEverySeconds: the first
// refusal since the last line logged, then "(and N more malformed ... since)". A source that keeps
// refusing (a broken sensor read every 5 s) fills no disk.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "exporter/metrics.h"

namespace plumb::exporter {

inline constexpr double kLogEverySeconds = 10;  // malformed-value messages at most this often

class MalformedLog {
 public:
  // `what` names the things refused in the summary: "malformed line(s)", "refused value(s)".
  // An unset `log` writes to standard error (terminal-safe); an unset `now` is the steady clock.
  MalformedLog(std::string what, std::function<void(const std::string&)> log,
               std::function<double()> now);

  void add(std::string message);  // one refusal: counted; its message kept if none is waiting
  void flush();                   // logs the waiting message when kLogEverySeconds have passed
  uint64_t count() const { return count_; }

 private:
  std::string what_;
  std::function<void(const std::string&)> log_;
  std::function<double()> now_;
  uint64_t count_ = 0;
  std::string pending_;  // the first refusal's message since the last one logged
  uint64_t pending_more_ = 0;
  double last_log_ = -1e300;
};

// plumb_exporter_source_malformed_total{host, source}: what a probe or device source refused.
Family source_malformed_family(const std::string& host, const std::string& source,
                               uint64_t count);

}  // namespace plumb::exporter
