#include "step/analysis.h"

#include <algorithm>
#include <limits>

#include "step/baseline_match.h"
#include "step/breakdown.h"
#include "step/clocks.h"
#include "step/collectives.h"
#include "step/intervals.h"
#include "step/plan_compare.h"
#include "step/trace_set.h"

namespace plumb::step {
namespace {

int64_t earliest_step_start(const std::vector<RankTrace>& traces) {
  int64_t t = std::numeric_limits<int64_t>::max();
  for (const RankTrace& trace : traces) t = std::min(t, trace.steps.front().start_ns);
  return t;
}

// The step whose slowest rank is slowest.
int64_t slowest_step(const StepResult& result) {
  int64_t step = -1;
  double worst = -1;
  for (const RankSteps& rank : result.ranks) {
    for (const StepBreakdown& s : rank.steps) {
      if (s.step_time_us > worst) {
        worst = s.step_time_us;
        step = s.step;
      }
    }
  }
  return step;
}

// Joins intervals closer than `gap` (drawing resolution).
IntervalSet coarsen(const IntervalSet& set, int64_t gap) {
  IntervalSet out;
  for (const Interval& i : set) {
    if (!out.empty() && i.start - out.back().end < gap) {
      out.back().end = i.end;
    } else {
      out.push_back(i);
    }
  }
  return out;
}

Lane lane_of(const RankTrace& trace, const ActivitySets& sets, const StepSpan& span,
             int64_t origin, int64_t gap) {
  Lane lane;
  lane.rank = trace.rank;
  auto add = [&](const IntervalSet& set, Activity activity) {
    for (const Interval& i : coarsen(clip(set, span.start_ns, span.end_ns), gap)) {
      lane.intervals.push_back({static_cast<double>(i.start - origin) / kNsPerUs,
                                static_cast<double>(i.end - origin) / kNsPerUs, activity});
    }
  };
  add(sets.compute, Activity::kCompute);
  add(sets.communication, Activity::kCommunication);
  add(sets.memory, Activity::kMemory);
  return lane;
}

void draw_swimlane(const std::vector<RankTrace>& traces, const std::vector<ActivitySets>& sets,
                   StepResult& result) {
  result.swimlane_step = slowest_step(result);
  int64_t origin = std::numeric_limits<int64_t>::max();
  int64_t longest = 1;
  for (const RankTrace& trace : traces) {
    for (const StepSpan& s : trace.steps) {
      if (s.step != result.swimlane_step) continue;
      origin = std::min(origin, s.start_ns);
      longest = std::max(longest, s.end_ns - s.start_ns);
    }
  }
  int64_t gap = longest / kSwimlaneResolution;
  for (size_t r = 0; r < traces.size(); ++r) {
    for (const StepSpan& s : traces[r].steps) {
      if (s.step == result.swimlane_step) {
        result.swimlane.push_back(lane_of(traces[r], sets[r], s, origin, gap));
      }
    }
  }
}

}  // namespace

StepResult analyze(std::vector<RankTrace> traces, const AnalysisOptions& options) {
  StepResult result;
  result.world_size = check_trace_set(traces, options.step_regex, result.notes);
  line_up_own_clocks(traces, result.notes);
  int64_t origin = earliest_step_start(traces);
  std::vector<ActivitySets> sets;
  std::vector<std::vector<int64_t>> exposed;
  for (const RankTrace& trace : traces) {
    sets.push_back(activity_sets(trace));
    exposed.push_back(exposed_per_call(trace, sets.back().compute));
    RankSteps rank{trace.rank, trace.source, trace.format, break_down(trace, sets.back())};
    for (size_t i = 0; i < rank.steps.size(); ++i) {
      rank.steps[i].start_us = static_cast<double>(trace.steps[i].start_ns - origin) / kNsPerUs;
    }
    result.ranks.push_back(std::move(rank));
  }
  result.collectives =
      match_collectives(traces, exposed, result.world_size, result.matching, result.notes);
  result.stragglers = find_stragglers(result.collectives);
  if (!options.baseline_rows.empty()) {
    result.baseline = options.baseline;
    attach_baseline(options.baseline_rows, options.baseline_layer, result.world_size,
                    result.collectives, result.notes);
  }
  if (options.plan) {
    result.plan_source = options.plan_source;
    result.plan = compare_with_plan(result, *options.plan, options.plan_source);
    result.plan_run = plan_run_of(*options.plan);
  }
  draw_swimlane(traces, sets, result);
  return result;
}

}  // namespace plumb::step
