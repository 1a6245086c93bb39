// What `plumb plan --calibrate SOURCE` reads (repeatable): comm measurements, whose busbw curves
// price the links (plan/calibration.h), or measured steps of a known layout — a step record
// (plumb step --plan PLAN --save) or a plumb step --json file — whose parts fit the model's
// efficiencies (plan/step_fit.h; each read by cli/measured_step.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baseline/store.h"
#include "plan/step_fit.h"

namespace plumb::cli {

struct CalibrationSources {
  std::optional<baseline::Record> comm;  // at most one: one set of links
  std::string comm_what;                 // the argument that named it
  std::vector<plan::MeasuredStep> steps;
};

// Reads every source; errors name the source ("--calibrate 7", "--calibrate step.json") and say
// what it needs instead.
CalibrationSources load_calibration_sources(const std::vector<std::string>& whats,
                                            const std::string& db_path);

}  // namespace plumb::cli
