// `plumb diff` of two recovery baselines (plumb.recovery/1, saved by `plumb run --save`): did
// failures take longer to notice, to recover from, to get the job stepping again; were more steps
// lost; did fewer restarts resume right after their checkpoint.
//
// A baseline holds a few failures (a drill injects K), too few for a noise estimate: the
// threshold alone judges. A figure worse by more than the threshold is a regression (exit 1); the
// failure count and each recovery step's time are shown, not judged (the count is what happened
// or was injected; the steps add up to the recovery time, which is judged).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "baseline/diff.h"
#include "baseline/store.h"

namespace plumb::baseline {

inline constexpr const char* kRecoveryDiffSchema = "plumb.recovery-diff/1";

struct RecoveryFigureDiff {
  std::string figure;        // "detect s, median", ...
  std::string field;         // its totals field: "detect_seconds_median", ...
  double a = 0;              // NaN when the record has none
  double b = 0;
  double change = 0;         // (b − a) / a; NaN when either is unknown or a is 0
  Verdict verdict = Verdict::kSame;
  bool gates = false;        // counts towards the exit status
};

struct RecoveryDiff {
  RecordRef a;
  RecordRef b;
  int failures_a = 0;
  int failures_b = 0;
  int attempts_a = 0;
  int attempts_b = 0;
  std::string result_a;      // finished | gave_up | stopped
  std::string result_b;
  double threshold = 0;
  std::vector<RecoveryFigureDiff> figures;  // the totals, in the order shown
  std::vector<RecoveryFigureDiff> steps;    // each recovery step's median seconds, by name

  int regressions() const;   // gating figures with Verdict::kRegression
  int exit_code() const;     // 1 on a regression, else 0
};

// Both records must hold a recovery record. Errors (exit 2) name the record and the field
// ("baseline 3: recoveries[0].detect_seconds: expected a number, got \"x\"").
RecoveryDiff recovery_diff(const Record& a, const Record& b, const DiffOptions& options = {});

// plumb.recovery-diff/1
nlohmann::json recovery_diff_json(const RecoveryDiff& diff);

}  // namespace plumb::baseline
