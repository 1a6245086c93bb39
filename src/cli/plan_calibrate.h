// What `plumb plan --calibrate SOURCE` reads (repeatable): comm measurements, whose busbw curves
// price the links (plan/calibration.h), or measured steps of a known layout — a step record
// (plumb step --plan PLAN --save) or a plumb step --json file — whose parts fit the model's
// efficiencies (plan/step_fit.h).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "baseline/store.h"
#include "plan/step_fit.h"
#include "step/result.h"

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

// The run a step result measured (its plan_run) and the mean seconds of each part (its plan
// rows). `name` names the source in errors.
plan::MeasuredStep measured_step(const step::StepResult& r, const std::string& name);

// The same from a plumb.step/1 document (a --json file, or a stored record's step): a step
// without a plan is refused before the rest of the document is read.
plan::MeasuredStep measured_step_from_json(const nlohmann::json& doc, const std::string& name);

}  // namespace plumb::cli
