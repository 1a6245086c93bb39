// Run-set files for `plumb plan validate` (docs/plan.md section 10, issue 15): published training
// runs written as YAML — model, hardware, layout, the one measured figure, and which fields the
// source published and which were assumed (with why). Each run is predicted with the catalog
// device and its default cluster unless the run overrides it; no constant is tuned per row.
#pragma once

#include <string>
#include <vector>

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
};

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
