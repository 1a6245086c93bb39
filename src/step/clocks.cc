#include "step/clocks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "common/error.h"
#include "common/stats.h"
#include "step/chrome_trace.h"

namespace plumb::step {
namespace {

// The calls that start inside the trace's steps, in the order this rank issued them.
std::vector<const CollectiveCall*> calls_in_steps(const RankTrace& trace) {
  std::vector<const CollectiveCall*> out;
  if (trace.steps.empty()) return out;
  const int64_t first = trace.steps.front().start_ns;
  const int64_t last = trace.steps.back().end_ns;
  for (const CollectiveCall& call : trace.calls) {
    if (call.start_ns >= first && call.start_ns < last) out.push_back(&call);
  }
  std::stable_sort(out.begin(), out.end(), [](const CollectiveCall* a, const CollectiveCall* b) {
    return a->start_ns < b->start_ns;
  });
  return out;
}

// Times past int64 ns from the reference's: only damaged traces hold them.
[[noreturn]] void too_far(const RankTrace& trace, int reference) {
  throw Error(fmt::format("{}: its times cannot be put on rank {}'s clock: they lie past the "
                          "range of int64 nanoseconds from it",
                          trace.source, reference));
}

void shift(RankTrace& trace, int64_t by, int reference) {
  auto move = [&](int64_t& t) {
    if (__builtin_add_overflow(t, by, &t)) too_far(trace, reference);
  };
  for (StepSpan& s : trace.steps) {
    move(s.start_ns);
    move(s.end_ns);
  }
  for (DeviceSpan& s : trace.spans) {
    move(s.start_ns);
    move(s.end_ns);
  }
  for (CollectiveCall& c : trace.calls) {
    move(c.start_ns);
    move(c.end_ns);
  }
  for (DroppedEvents& d : trace.dropped) {
    for (int64_t& start : d.starts_ns) move(start);
  }
}

std::string who(const RankTrace& trace) {
  return fmt::format("rank {} ({})", trace.rank, trace.source);
}

// Lines `trace` up with `reference`; returns the note.
std::string line_up(RankTrace& trace, const RankTrace& reference) {
  std::vector<const CollectiveCall*> own = calls_in_steps(trace);
  std::vector<const CollectiveCall*> ref = calls_in_steps(reference);
  const size_t pairs = std::min(own.size(), ref.size());
  if (pairs == 0) {
    return fmt::format("{}: its times count from its own profiler's start and no collective in "
                       "its steps and rank {}'s can line the two up: its skew and waiting times "
                       "against other ranks are not known",
                       who(trace), reference.rank);
  }
  std::vector<int64_t> gaps;
  for (size_t i = 0; i < pairs; ++i) {
    int64_t gap = 0;
    if (__builtin_sub_overflow(own[i]->end_ns, ref[i]->end_ns, &gap)) {
      too_far(trace, reference.rank);
    }
    gaps.push_back(gap);
  }
  const int64_t offset = lower_median(std::move(gaps));
  if (offset == std::numeric_limits<int64_t>::min()) too_far(trace, reference.rank);
  shift(trace, -offset, reference.rank);
  return fmt::format("{}: its times count from its own profiler's start (PyTorch's legacy "
                     "profiler): put on rank {}'s clock by the median gap between their {} "
                     "collectives' ends ({}{} µs)",
                     who(trace), reference.rank, pairs, offset <= 0 ? "+" : "",
                     ns_as_us(-offset));
}

}  // namespace

void line_up_own_clocks(std::vector<RankTrace>& traces, std::vector<std::string>& notes) {
  if (std::none_of(traces.begin(), traces.end(), [](const RankTrace& t) { return t.own_clock; })) {
    return;
  }
  auto reference = std::find_if(traces.begin(), traces.end(),
                                [](const RankTrace& t) { return !t.own_clock; });
  if (reference == traces.end()) reference = traces.begin();
  for (auto it = traces.begin(); it != traces.end(); ++it) {
    if (it == reference || !it->own_clock) continue;
    notes.push_back(line_up(*it, *reference));
  }
}

}  // namespace plumb::step
