// Reporters for comm::Result: each one format, each writing to a stream it is handed, so the same
// result can go to the screen and to files at once (google/benchmark's BenchmarkReporter shape).
#pragma once

#include <memory>
#include <ostream>
#include <string_view>

#include "comm/result.h"

namespace plumb::report {

class CommReporter {
 public:
  virtual ~CommReporter() = default;
  virtual void report(const comm::Result& result, std::ostream& out) const = 0;
};

// nccl-tests-style tables, one per (layer, collective), showing per size the slowest group, the
// spread across groups and the tail (p50/p99/max), then the average busbw over sizes ≥ 1 MiB.
class CommConsoleReporter final : public CommReporter {
 public:
  void report(const comm::Result& result, std::ostream& out) const override;
};

// JSON, schema plumb.comm/1: every group's row, the placement, the environment, the summary.
class CommJsonReporter final : public CommReporter {
 public:
  void report(const comm::Result& result, std::ostream& out) const override;
};

// CSV: a header, then one line per row (every group), the JSON row's fields as columns.
class CommCsvReporter final : public CommReporter {
 public:
  void report(const comm::Result& result, std::ostream& out) const override;
};

// The JSON document itself (also used by baseline storage).
nlohmann::json comm_result_json(const comm::Result& result);

}  // namespace plumb::report
