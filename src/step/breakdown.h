// Per rank and step: where the device time went (docs/step.md, "Per rank and step"). The same
// quantities as HTA's temporal breakdown and comm/comp overlap and msprof-analyze's
// step_trace_time, each defined on unions of intervals over all streams.
#pragma once

#include <cstdint>
#include <vector>

#include "step/intervals.h"
#include "step/result.h"
#include "step/trace.h"

namespace plumb::step {

// One rank's device activity over the whole trace, as unions over all streams.
struct ActivitySets {
  IntervalSet compute;
  IntervalSet communication;
  IntervalSet memory;
};

ActivitySets activity_sets(const RankTrace& trace);

// The breakdown of one step: every set clipped to [step.start, step.end).
//   communication_us          |C|                C = ∪ communication
//   compute_us                |K|                K = ∪ compute
//   overlapped_us             |C ∩ K|
//   exposed_communication_us  |C \ K|
//   memory_us                 |M \ (K ∪ C)|      M = ∪ memcpy/memset
//   idle_us                   step − |K ∪ C ∪ M|
//   preparing_us              first instant of K − step start (msprof's Preparing; NaN: no K)
// so compute + exposed_communication + memory + idle == step_time.
StepBreakdown break_down_step(const ActivitySets& sets, const StepSpan& step);

std::vector<StepBreakdown> break_down(const RankTrace& trace, const ActivitySets& sets);

// For each call of `trace`: ns of its device spans not overlapped by any computation.
std::vector<int64_t> exposed_per_call(const RankTrace& trace, const IntervalSet& compute);

}  // namespace plumb::step
