// The recovery baseline (recovery_record.h) as a plumb.recovery/1 document, and back: what
// `plumb run --save` stores, `plumb export` writes and `plumb diff` / `plumb show` read.
//
// Every field of the record is written, null for an absent optional, plus "totals" (the figures
// over the recoveries that plumb show, the metrics and plumb diff use; derived, so a reader
// recomputes them rather than trusting the document's).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "supervise/recovery_record.h"

namespace plumb::supervise {

// The figures over a baseline's recoveries; a median or maximum is absent when no recovery has
// the value (no failure, or none that made progress again).
struct RecoveryTotals {
  int failures = 0;                        // recoveries[]
  int restarts = 0;                        // attempts − 1 (0 when none started)
  std::optional<double> detect_median;     // detect_seconds
  std::optional<double> detect_max;
  std::optional<double> recovery_median;   // recovery_seconds(): the steps' sum
  std::optional<double> recovery_max;
  std::optional<double> downtime_median;   // downtime_seconds, where known
  std::optional<double> downtime_max;
  int64_t steps_lost = 0;                  // the sum of the known steps_lost
  std::optional<double> resumed_ratio;     // resumed_after_checkpoint true / known; absent if none
};

RecoveryTotals recovery_totals(const RecoveryBaseline& baseline);

// plumb.recovery/1, with "totals".
nlohmann::json recovery_to_json(const RecoveryBaseline& baseline);

// Reads a plumb.recovery/1 document with every field's type checked. Errors (plumb::Error, exit
// 2) name `what` and the field: "baseline 3: recoveries[1].detect_seconds: expected a number,
// got \"x\"". "totals" is not read (recomputed from the recoveries).
RecoveryBaseline recovery_from_json(const nlohmann::json& doc, const std::string& what);

}  // namespace plumb::supervise
