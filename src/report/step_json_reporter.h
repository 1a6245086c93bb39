// JSON plumb.step/1: what `plumb step --json` writes and the store keeps for a "step" record, and
// the reader that turns a stored document back into a StepResult (the store, `plumb diff`).
// Field names are the and docs/step.md's; unknown figures (NaN) are null.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "report/step_reporter.h"
#include "step/result.h"

namespace plumb::report {

// The document: schema, world_size, ranks[] (rank, source, format, steps[]), collectives[],
// stragglers[], plan[] (with ratio = measured / predicted), notes[], baseline, plan_source and
// swimlane {step, lanes[] {rank, intervals[] {start_us, end_us, activity}}}. Not written: each
// step's start_us and each collective's last_start_ns (the swimlane already holds what they
// placed), so a round trip leaves them 0.
nlohmann::json step_to_json(const step::StepResult& result);

// Reads a plumb.step/1 document back; `source` names it in errors, which name the field:
// "FILE: ranks[2].steps[0].step_time_us: expected a number, got \"x\"". Throws plumb::Error
// (exit 2) for another schema, a missing field or a value of the wrong type or range.
step::StepResult step_from_json(const nlohmann::json& doc, std::string_view source);

// "compute", "communication", "memory": the swimlane's activity names.
std::string_view activity_name(step::Activity activity);

// step_to_json, indented, one document per call.
class StepJsonReporter final : public StepReporter {
 public:
  void report(const step::StepResult& result, std::ostream& out) const override;
};

}  // namespace plumb::report
