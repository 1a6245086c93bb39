// What `plumb step` found: plain data for the reporters (console, JSON plumb.step/1, CSV, HTML)
// and the store. Times in microseconds (doubles) as the JSON shows them; NaN where unknown.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "step/trace.h"

namespace plumb::step {

inline constexpr const char* kStepSchema = "plumb.step/1";
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kUsPerS = 1e6;

// One rank's step (docs/step.md, "Per rank and step"). Every device interval is clipped to the
// step's span [start, end). compute + exposed_communication + memory + idle == step_time.
struct StepBreakdown {
  int64_t step = 0;
  double step_time_us = 0;                // the ProfilerStep#N span
  double compute_us = 0;                  // |∪ compute|, all streams
  double communication_us = 0;            // |∪ communication|
  double exposed_communication_us = 0;    // |∪ communication \ ∪ compute|
  double overlapped_us = 0;               // |∪ communication ∩ ∪ compute|
  double memory_us = 0;                   // |∪ memory \ (∪ compute ∪ ∪ communication)|
  double idle_us = 0;                     // step_time − |∪ all device activity|
  // msprof-analyze's step_trace_time columns (breakdown.h has the definitions): from the step's
  // start to its first computation or communication (NaN when it has none); the time between
  // its first and last one that neither covers; receive ops (NaN where the trace cannot tell
  // them apart); the span of the first to the last, less the bubble.
  double preparing_us = kNaN;
  double free_us = 0;
  double bubble_us = kNaN;
  double stage_us = 0;
  double start_us = 0;                    // step start, from the set's earliest step start
};

struct RankSteps {
  int rank = -1;
  std::string source;
  std::string format;
  std::vector<StepBreakdown> steps;
};

// One collective instance matched across the ranks of its group present in the set.
struct CollectiveInstance {
  int64_t step = 0;                 // the step holding the last rank's start
  CollectiveKind kind = CollectiveKind::kUnknown;
  std::string group;                // process group name; empty when unknown
  std::vector<int> group_ranks;     // the group's ranks (all of them, present or not)
  int ranks_seen = 0;               // how many of them the set holds
  uint64_t bytes = 0;               // nccl-tests convention; 0 unknown
  int first_rank = -1;              // earliest to start
  int last_rank = -1;               // latest to start: the one the others waited for
  double start_skew_us = 0;         // last rank's start − first rank's start
  double waited_us = 0;             // Σ over ranks of (last start − own start)
  double duration_us = 0;           // last rank's start → the instance's end
  double busbw_gbps = kNaN;         // bytes / duration × bus factor(group size); NaN when no bytes
  double baseline_busbw_gbps = kNaN;  // the stored comm baseline at this size on baseline_layer
  std::string baseline_layer;
  double exposed_us = 0;            // mean over ranks of its time not overlapped by compute
  int64_t last_start_ns = 0;        // absolute, for the swimlane
  std::string name;
};

// How the collective calls were matched across ranks (docs/step.md, "Matching"). Every instance
// the set holds is one of: matched (every rank of its group in the set took part, lined up in
// time), partial (recorded by only some of them: profile windows), unaligned (calls that line up
// with no counterpart: left out of collectives[]). instances = matched + partial + unaligned =
// by_sequence_number + by_call_order.
struct MatchSummary {
  int64_t instances = 0;
  int64_t matched = 0;
  int64_t partial = 0;
  int64_t unaligned = 0;
  int64_t resyncs = 0;  // times matching re-synchronised (clock offsets, a call missing)
  int64_t by_sequence_number = 0;
  int64_t by_call_order = 0;
};

// The rank the others waited for in one step (step == -1: over the whole trace).
struct Straggler {
  int64_t step = 0;
  int rank = -1;
  double waited_on_us = 0;
};

// Measured against `plumb plan`'s prediction, one row per component.
struct PlanRow {
  std::string component;  // "compute", "exposed tp", ..., "bubble", "step"
  double measured_us = kNaN;
  double predicted_us = kNaN;
};

// Merged intervals of one rank in the swimlane step, relative to the step's earliest start.
struct Lane {
  int rank = -1;
  struct Interval {
    double start_us = 0;
    double end_us = 0;
    Activity activity = Activity::kCompute;
  };
  std::vector<Interval> intervals;
};

struct StepResult {
  int world_size = -1;                  // from the traces; -1 when none says
  std::vector<RankSteps> ranks;         // sorted by rank
  std::vector<CollectiveInstance> collectives;  // by step, then start
  MatchSummary matching;
  std::vector<Straggler> stragglers;    // per step, biggest first; then step −1 (whole trace)
  std::vector<PlanRow> plan;            // empty without --plan
  std::string plan_source;
  // What the plan was of, so that plumb plan --calibrate can rebuild the run this step measured:
  // JSON text {"inputs": plumb.plan/1's context.inputs, "layout", "precision"}; empty without
  // --plan, or when the plan file predates context.inputs.
  std::string plan_run;
  std::string baseline;                 // describe_record() of --baseline; empty without
  int64_t swimlane_step = -1;           // the step drawn (the slowest)
  std::vector<Lane> swimlane;
  std::vector<std::string> notes;       // partial rank set, steps dropped, ...
};

}  // namespace plumb::step
