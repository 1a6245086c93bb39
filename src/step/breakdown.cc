#include "step/breakdown.h"

#include <algorithm>
#include <string_view>

namespace plumb::step {
namespace {

// msprof-analyze's and torch_npu's bubble: HCCL ops whose name starts so (pipeline receives).
constexpr std::string_view kReceiveOpPrefix = "hcom_receive";

double us(int64_t ns) { return static_cast<double>(ns) / kNsPerUs; }

bool is_receive(const RankTrace& trace, const DeviceSpan& span) {
  if (span.call < 0 || static_cast<size_t>(span.call) >= trace.calls.size()) return false;
  return trace.calls[static_cast<size_t>(span.call)].name.starts_with(kReceiveOpPrefix);
}

// msprof-analyze's columns of one step from its compute ∪ communication `busy`.
void add_msprof_columns(const IntervalSet& busy, const ActivitySets& sets, const StepSpan& step,
                        StepBreakdown& out) {
  int64_t bubble = 0;
  for (const Interval& r : sets.receives) {
    bubble += std::max<int64_t>(0, std::min(r.end, step.end_ns) - std::max(r.start, step.start_ns));
  }
  out.bubble_us = sets.receives_known ? us(bubble) : kNaN;
  if (!sets.receives_known) bubble = 0;
  if (busy.empty()) return;  // msprof: Free and Stage 0; plumb's Preparing unknown
  const int64_t span = busy.back().end - busy.front().start;
  out.preparing_us = us(busy.front().start - step.start_ns);
  out.free_us = us(span - length(busy));
  out.stage_us = us(span - bubble);
}

}  // namespace

ActivitySets activity_sets(const RankTrace& trace) {
  std::vector<Interval> compute;
  std::vector<Interval> communication;
  std::vector<Interval> memory;
  std::vector<Interval> receives;
  for (const DeviceSpan& span : trace.spans) {
    if (span.activity == Activity::kCommunication && is_receive(trace, span)) {
      receives.push_back({span.start_ns, span.end_ns});
    }
    Interval interval{span.start_ns, span.end_ns};
    switch (span.activity) {
      case Activity::kCompute: compute.push_back(interval); break;
      case Activity::kCommunication: communication.push_back(interval); break;
      case Activity::kMemory: memory.push_back(interval); break;
    }
  }
  return {unite(std::move(compute)), unite(std::move(communication)), unite(std::move(memory)),
          std::move(receives), trace.format.starts_with("ascend")};
}

StepBreakdown break_down_step(const ActivitySets& sets, const StepSpan& step) {
  IntervalSet compute = clip(sets.compute, step.start_ns, step.end_ns);
  IntervalSet communication = clip(sets.communication, step.start_ns, step.end_ns);
  IntervalSet memory = clip(sets.memory, step.start_ns, step.end_ns);
  IntervalSet busy = unite(compute, communication);
  int64_t overlapped = length(intersect(communication, compute));
  int64_t memory_only = length(subtract(memory, busy));
  int64_t step_ns = step.end_ns - step.start_ns;
  StepBreakdown out;
  out.step = step.step;
  out.step_time_us = us(step_ns);
  out.compute_us = us(length(compute));
  out.communication_us = us(length(communication));
  out.overlapped_us = us(overlapped);
  out.exposed_communication_us = us(length(communication) - overlapped);
  out.memory_us = us(memory_only);
  out.idle_us = us(step_ns - length(busy) - memory_only);
  add_msprof_columns(busy, sets, step, out);
  return out;
}

std::vector<StepBreakdown> break_down(const RankTrace& trace, const ActivitySets& sets) {
  std::vector<StepBreakdown> out;
  out.reserve(trace.steps.size());
  for (const StepSpan& step : trace.steps) out.push_back(break_down_step(sets, step));
  return out;
}

std::vector<int64_t> exposed_per_call(const RankTrace& trace, const IntervalSet& compute) {
  std::vector<int64_t> exposed(trace.calls.size(), 0);
  for (const DeviceSpan& span : trace.spans) {
    if (span.call < 0 || static_cast<size_t>(span.call) >= exposed.size()) continue;
    int64_t covered = overlap_length(compute, span.start_ns, span.end_ns);
    exposed[static_cast<size_t>(span.call)] += span.end_ns - span.start_ns - covered;
  }
  return exposed;
}

}  // namespace plumb::step
