// A measured step of a known run, for plumb plan --calibrate (plan/step_fit.h): what `plumb step
// --plan` kept of the plan (plan_run: its layout and its input files' text) and the mean seconds
// of each part it measured (its plan rows). Apart from plan_calibrate.h, which also reads the
// store, so that the fuzz target of this reader does not link the store.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "plan/step_fit.h"
#include "step/result.h"

namespace plumb::cli {

// The run a step result measured and its parts; `name` names the source in errors ("--calibrate
// 7"). A step without a plan, or whose plan file predates context.inputs, is refused with what
// to run instead.
plan::MeasuredStep measured_step(const step::StepResult& r, const std::string& name);

// The same from a plumb.step/1 document (a --json file, or a stored record's step): a step
// without a plan is refused before the rest of the document is read.
plan::MeasuredStep measured_step_from_json(const nlohmann::json& doc, const std::string& name);

}  // namespace plumb::cli
