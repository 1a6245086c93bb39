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
  // Receive ops (HCCL's hcom_receive_*), each as it ran, not united (msprof-analyze sums them);
  // `receives_known` is false where the trace cannot tell them apart (NCCL runs send and receive
  // in one SendRecv kernel).
  std::vector<Interval> receives;
  bool receives_known = false;
};

ActivitySets activity_sets(const RankTrace& trace);

// The breakdown of one step: every set clipped to [step.start, step.end).
//   communication_us          |C|                C = ∪ communication
//   compute_us                |K|                K = ∪ compute
//   overlapped_us             |C ∩ K|
//   exposed_communication_us  |C \ K|
//   memory_us                 |M \ (K ∪ C)|      M = ∪ memcpy/memset
//   idle_us                   step − |K ∪ C ∪ M|
// so compute + exposed_communication + memory + idle == step_time; and msprof-analyze's
// step_trace_time columns (torch_npu's definitions, which cluster_analysis copies), with B = K ∪ C,
// b0 its first instant in the step and b1 its last:
//   preparing_us              b0 − step start (NaN: no K ∪ C in the step)
//   free_us                   (b1 − b0) − |B|: between the first and the last computation or
//                             communication, the time neither covers (memory copies count)
//   bubble_us                 Σ |receive op ∩ step|, not united (NaN: receives not known)
//   stage_us                  (b1 − b0) − bubble = compute + exposed_communication + free − bubble
StepBreakdown break_down_step(const ActivitySets& sets, const StepSpan& step);

std::vector<StepBreakdown> break_down(const RankTrace& trace, const ActivitySets& sets);

// For each call of `trace`: ns of its device spans not overlapped by any computation.
std::vector<int64_t> exposed_per_call(const RankTrace& trace, const IntervalSet& compute);

}  // namespace plumb::step
