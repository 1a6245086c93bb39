// Run-set files for `plumb plan validate` (docs/plan.md section 10, issue 15): published training
// runs written as YAML — model, hardware, layout, the one measured figure, and which fields the
// source published and which were assumed (with why). Each run is predicted with the catalog
// device and its default cluster unless the run overrides it; no constant is tuned per row.
#pragma once

#include <string>
#include <vector>

#include "plan/step_fit.h"
#include "plan/validation.h"

namespace plumb::plan {

// Issue 15's bars for a set that names none: MAPE ≤ 12%, no row beyond 25%.
inline constexpr double kRunSetMape = 0.12;
inline constexpr double kRunSetMaxError = 0.25;

struct RunSetTargets {
  double mape = kRunSetMape;            // largest mean |error|
  double max_error = kRunSetMaxError;   // largest |error| of one row
};

// A run set read, checked and predicted: one row per run, with its error.
struct RunSet {
  ValidationSet set;  // name: the file's `set`; source: its title and path
  RunSetTargets targets;
  // Each row's run as a measured step (plan/step_fit.h): its step time is the predicted one
  // scaled by published over predicted speed, so that plan --calibrate can be tried on the set.
  std::vector<MeasuredStep> steps;
};

// The set predicted again, each row after calibrating from the OTHER rows of its group (the same
// source and cluster) and device: leave-one-out, a row is never fitted with itself. A row with no
// such other row keeps its prediction and a note says so. Named "NAME · calibrated".
ValidationSet calibrated_leave_one_out(const RunSet& r);

// A run calibrated on one measured step of the same model on the same device at fewer devices
// (issue 34: "calibrated on one measured step of a run, the prediction of the same model at 8×
// the devices").
struct ScalePair {
  std::string small, large;  // run names
  int64_t small_devices = 0, large_devices = 0;
  double error_before = 0;   // of the large run's speed, predicted from the catalog
  double error_after = 0;    // predicted after calibrating on the small run alone
  std::string split;         // the larger run's
  // Both runs of one group (one source table and cluster): one job at two scales. A pair across
  // groups changes the software, the cluster or the recipe with the scale.
  bool same_source = true;
};

// Of the pairs at least `ratio` apart (of one split, or all when empty; of one source only, or
// across sources too): how many, and how many within `tolerance` of the measured speed before
// and after calibration.
struct ScaleSummary {
  size_t pairs = 0, within_before = 0, within_after = 0;
};
enum class PairScope { kSameSource, kAll };
ScaleSummary summarize_pairs(const std::vector<ScalePair>& pairs, double ratio, double tolerance,
                             const std::string& split = "",
                             PairScope scope = PairScope::kSameSource);
// Every pair of runs of one model on one device at two device counts, across the sets.
std::vector<ScalePair> scale_pairs(const std::vector<const RunSet*>& sets);

// Reads a run-set file, checks it and predicts every run. Every problem in the file at once, in
// one plumb::Error naming file:line and the field: duplicate and unknown keys (with "did you
// mean"), numbers out of range, names that are not in a table, a field neither or both published
// and assumed, not exactly one measured quantity, a layout plumb plan would refuse.
RunSet load_run_set(const std::string& path);

// The same from the file's text: `path` names it in messages, and model_file and hardware_file
// are relative to its folder (the fuzz target and tests).
RunSet run_set_from_text(const std::string& text, const std::string& path);

// The run-set files (*.yaml) of a folder, sorted; none when the folder does not exist.
std::vector<std::string> run_set_files(const std::string& dir);

}  // namespace plumb::plan
