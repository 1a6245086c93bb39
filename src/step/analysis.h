// `plumb step`'s analysis: rank traces in, StepResult out (breakdown per rank and step, matched
// collectives, stragglers, the comm baseline and the plan beside them). No printing.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "comm/result.h"
#include "step/result.h"
#include "step/trace.h"

namespace plumb::step {

struct AnalysisOptions {
  std::string step_regex = "ProfilerStep#(\\d+)";  // for the "no steps found" message
  std::vector<comm::Row> baseline_rows;           // empty: no baseline ratios
  std::string baseline;                           // how the baseline is named in reports
  std::string baseline_layer;                     // --baseline-layer; empty: by group size
  std::optional<nlohmann::json> plan;             // plumb.plan/1
  std::string plan_source;
};

// Checks the set (trace_set.h), then computes everything. Throws plumb::Error on a bad set.
StepResult analyze(std::vector<RankTrace> traces, const AnalysisOptions& options);

// Resolution of the swimlane: intervals of one activity closer than step/kSwimlaneResolution
// are drawn as one.
inline constexpr int64_t kSwimlaneResolution = 2000;

}  // namespace plumb::step
