#include "step/trace_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "common/error.h"

namespace plumb::step {
namespace {

std::string step_list(const RankTrace& trace) {
  if (trace.steps.empty()) return "none";
  if (trace.steps.size() == 1) return std::to_string(trace.steps.front().step);
  return fmt::format("{}–{} ({} steps)", trace.steps.front().step, trace.steps.back().step,
                     trace.steps.size());
}

std::vector<int64_t> step_numbers(const RankTrace& trace) {
  std::vector<int64_t> out;
  for (const StepSpan& s : trace.steps) out.push_back(s.step);
  std::sort(out.begin(), out.end());
  return out;
}

void check_each(const std::vector<RankTrace>& traces, const std::string& step_regex,
                std::vector<std::string>& problems) {
  for (const RankTrace& t : traces) {
    if (t.steps.empty()) {
      problems.push_back(fmt::format(
          "{}: no steps found: no host annotation's name matches '{}' (profile with "
          "torch.profiler.schedule and call prof.step(), or name the steps with --step-regex)",
          t.source, step_regex));
    }
  }
}

void check_ranks(const std::vector<RankTrace>& traces, std::vector<std::string>& problems) {
  for (size_t i = 1; i < traces.size(); ++i) {
    if (traces[i].rank == traces[i - 1].rank) {
      problems.push_back(fmt::format("rank {} appears twice: {} and {}", traces[i].rank,
                                     traces[i - 1].source, traces[i].source));
    }
  }
}

int check_world(const std::vector<RankTrace>& traces, std::vector<std::string>& problems) {
  const RankTrace* sayer = nullptr;
  for (const RankTrace& t : traces) {
    if (t.world_size <= 0) continue;
    if (sayer == nullptr) {
      sayer = &t;
    } else if (t.world_size != sayer->world_size) {
      problems.push_back(fmt::format(
          "world size disagrees: {} says {}, {} says {}: traces of different runs", sayer->source,
          sayer->world_size, t.source, t.world_size));
      return -1;
    }
  }
  int world = sayer == nullptr ? -1 : sayer->world_size;
  for (const RankTrace& t : traces) {
    if (world > 0 && t.rank >= world) {
      problems.push_back(fmt::format("{}: rank {} is outside the world size {} that {} states",
                                     t.source, t.rank, world, sayer->source));
    }
  }
  return world;
}

void check_steps(const std::vector<RankTrace>& traces, std::vector<std::string>& problems) {
  const RankTrace& first = traces.front();
  std::vector<int64_t> expected = step_numbers(first);
  for (const RankTrace& t : traces) {
    if (t.steps.empty() || step_numbers(t) == expected) continue;
    problems.push_back(fmt::format(
        "step sets differ: {} has steps {}, {} has {}: traces of different runs or profiler "
        "windows",
        first.source, step_list(first), t.source, step_list(t)));
    return;
  }
}

// The step whose span holds `t` (steps sorted by start); nullptr when none does.
const StepSpan* step_containing(const std::vector<StepSpan>& steps, int64_t t) {
  auto after = std::upper_bound(steps.begin(), steps.end(), t,
                                [](int64_t x, const StepSpan& s) { return x < s.start_ns; });
  if (after == steps.begin()) return nullptr;
  const StepSpan& step = *std::prev(after);
  return t < step.end_ns ? &step : nullptr;
}

// Device events per step as read: those kept (by their start) and those dropped.
std::map<int64_t, size_t> events_per_step(const RankTrace& trace) {
  std::map<int64_t, size_t> count;
  for (const DeviceSpan& span : trace.spans) {
    if (const StepSpan* step = step_containing(trace.steps, span.start_ns)) ++count[step->step];
  }
  for (const DroppedEvents& dropped : trace.dropped) {
    for (int64_t start : dropped.starts_ns) {
      if (const StepSpan* step = step_containing(trace.steps, start)) ++count[step->step];
    }
  }
  return count;
}

// "rank 1 (rank-1.json): dropped 2 device events for a negative 'dur' (the first: event 1234
// ('ncclKernel_AllReduce...')): 1 of 1205 in step 5, 1 outside every step; their time is
// missing from the figures". "Of 1205": the device events the reader found in the step.
std::string dropped_note(const RankTrace& trace, const DroppedEvents& dropped,
                         const std::map<int64_t, size_t>& per_step) {
  constexpr size_t kStepsShown = 5;
  std::map<int64_t, size_t> in_step;
  size_t outside = 0;
  for (int64_t start : dropped.starts_ns) {
    if (const StepSpan* step = step_containing(trace.steps, start)) {
      ++in_step[step->step];
    } else {
      ++outside;
    }
  }
  std::vector<std::string> parts;
  size_t rest = 0;
  for (const auto& [step, count] : in_step) {
    if (parts.size() < kStepsShown) {
      parts.push_back(fmt::format("{} of {} in step {}", count, per_step.at(step), step));
    } else {
      rest += count;
    }
  }
  if (rest > 0) {
    parts.push_back(fmt::format("{} more in {} other steps", rest, in_step.size() - kStepsShown));
  }
  if (outside > 0) parts.push_back(fmt::format("{} outside every step", outside));
  const size_t n = dropped.starts_ns.size();
  return fmt::format("rank {} ({}): dropped {} device event{} for {} (the first: {}): {}; their "
                     "time is missing from the figures",
                     trace.rank, trace.source, n, n == 1 ? "" : "s", dropped.why, dropped.first,
                     fmt::join(parts, ", "));
}

void note_dropped(const std::vector<RankTrace>& traces, std::vector<std::string>& notes) {
  for (const RankTrace& trace : traces) {
    if (trace.dropped.empty()) continue;
    const std::map<int64_t, size_t> per_step = events_per_step(trace);
    for (const DroppedEvents& dropped : trace.dropped) {
      notes.push_back(dropped_note(trace, dropped, per_step));
    }
  }
}

}  // namespace

int check_trace_set(std::vector<RankTrace>& traces, const std::string& step_regex,
                    std::vector<std::string>& notes) {
  std::stable_sort(traces.begin(), traces.end(),
                   [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  std::vector<std::string> problems;
  check_each(traces, step_regex, problems);
  check_ranks(traces, problems);
  int world = check_world(traces, problems);
  if (problems.empty()) check_steps(traces, problems);
  if (!problems.empty()) {
    std::string message = problems.front();
    for (size_t i = 1; i < problems.size(); ++i) message += "\n" + problems[i];
    throw Error(message);
  }
  if (world > 0 && static_cast<int>(traces.size()) < world) {
    notes.push_back(fmt::format(
        "{} of {} ranks: cross-rank figures (skew, stragglers, matched collectives) cover only "
        "these ranks",
        traces.size(), world));
  }
  if (world <= 0) {
    notes.push_back("no trace states the world size: cross-rank figures cover the ranks given");
  }
  note_dropped(traces, notes);
  return world;
}

}  // namespace plumb::step
