#include "step/breakdown.h"

namespace plumb::step {
namespace {

constexpr double kNsPerUs = 1000.0;

double us(int64_t ns) { return static_cast<double>(ns) / kNsPerUs; }

}  // namespace

ActivitySets activity_sets(const RankTrace& trace) {
  std::vector<Interval> compute;
  std::vector<Interval> communication;
  std::vector<Interval> memory;
  for (const DeviceSpan& span : trace.spans) {
    Interval interval{span.start_ns, span.end_ns};
    switch (span.activity) {
      case Activity::kCompute: compute.push_back(interval); break;
      case Activity::kCommunication: communication.push_back(interval); break;
      case Activity::kMemory: memory.push_back(interval); break;
    }
  }
  return {unite(std::move(compute)), unite(std::move(communication)), unite(std::move(memory))};
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
  if (!compute.empty()) out.preparing_us = us(compute.front().start - step.start_ns);
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
