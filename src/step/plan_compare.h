// Measured against predicted: a `plumb plan --json` file (plumb.plan/1) beside what the traces
// show, per component, so that the plan can later be calibrated from real steps
// (docs/step.md, "Against the plan").
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "step/result.h"

namespace plumb::step {

// The parallel dimension a process group is, from the plan's layout in Megatron-LM's rank order
// (tp fastest, then cp, dp, pp; ep groups stride like cp·tp inside dp): its size and the stride
// between its ranks. "other" when the group's ranks are unknown or match no dimension.
std::string group_dimension(const std::vector<int>& group_ranks, CollectiveKind kind,
                            const nlohmann::json& layout);

// Rows: compute, exposed tp/cp/ep/pp/dp (and other when some exposed time matches no
// dimension), bubble (measured: idle), optimizer (not separable in a trace: measured NaN), step.
// Measured values are means over the ranks and steps of `result`. `plan` is plumb.plan/1; a
// wrong schema or a missing field throws plumb::Error naming `source` and the field.
// The plan's run as StepResult::plan_run keeps it; empty when `plan` has no context.inputs.
std::string plan_run_of(const nlohmann::json& plan);

std::vector<PlanRow> compare_with_plan(const StepResult& result, const nlohmann::json& plan,
                                       const std::string& source);

}  // namespace plumb::step
