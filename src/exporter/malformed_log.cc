#include "exporter/malformed_log.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "common/steady_time.h"
#include "common/strings.h"
#include "exporter/series.h"

namespace plumb::exporter {
namespace {

}  // namespace

MalformedLog::MalformedLog(std::string what, std::function<void(const std::string&)> log,
                           std::function<double()> now)
    : what_(std::move(what)), log_(std::move(log)), now_(std::move(now)) {
  if (!log_) {
    log_ = [](const std::string& line) { fmt::print(stderr, "{}\n", terminal_safe(line)); };
  }
  if (!now_) now_ = steady_seconds;
}

void MalformedLog::add(std::string message) {
  ++count_;
  if (pending_.empty()) {
    pending_ = std::move(message);
  } else {
    ++pending_more_;
  }
}

void MalformedLog::flush() {
  const double now = now_();
  if (pending_.empty() || now - last_log_ < kLogEverySeconds) return;
  std::string message = std::move(pending_);
  if (pending_more_ > 0) message += fmt::format(" (and {} more {} since)", pending_more_, what_);
  log_(message);
  pending_.clear();
  pending_more_ = 0;
  last_log_ = now;
}

Family source_malformed_family(const std::string& host, const std::string& source,
                               uint64_t count) {
  return {series::kSourceMalformed,
          "Rows and values the source refused as no measurement (docs/train-events.md, "
          "docs/device-sources.md)",
          "counter",
          {{{{series::kHost, host}, {"source", source}}, static_cast<double>(count), ""}}};
}

}  // namespace plumb::exporter
