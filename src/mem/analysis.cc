#include "mem/analysis.h"

#include <algorithm>
#include <functional>
#include <future>
#include <system_error>

namespace plumb::mem {
namespace {

// PyTorch's profiler names each step's range "ProfilerStep#<n>" (torch.profiler.profile.step()),
// which record_memory_history keeps in the frames: the trace's own step annotation.
const char* kProfilerStep = "^ProfilerStep#[0-9]+";

Steps find_steps(const Trace& t, const AnalyzeOptions& o) {
  if (o.step_regex) return steps_from_regex(t, Regex(*o.step_regex, "--step-regex"), *o.step_regex);
  if (!t.step_marks.empty()) {
    Steps s;
    s.source = StepSource::kRegex;
    s.starts = t.step_marks;
    s.confidence = 1;
    s.how = std::to_string(s.starts.size()) + " step(s) from the trace's step marks";
    return s;
  }
  static const Regex profiler_step(kProfilerStep);
  Steps annotated = steps_from_regex(t, profiler_step, kProfilerStep);
  if (annotated.starts.size() >= 2) {
    annotated.how = std::to_string(annotated.starts.size()) +
                    " step(s) from the profiler's ProfilerStep#N annotations";
    return annotated;
  }
  return detect_steps(t);
}

Fragmentation fragmentation_before(const Trace& t, size_t index) {
  const FreeSpace f = free_space_before(t, index);
  Fragmentation r;
  r.reserved = f.reserved;
  r.allocated = f.allocated;
  r.free = f.free;
  r.largest_free_block = f.largest_free_block;
  r.scattered = f.free > 0 ? 1 - static_cast<double>(f.largest_free_block) / static_cast<double>(f.free) : 0;
  return r;
}

std::vector<StepFigures> step_figures(const Timeline& tl, const Steps& s) {
  std::vector<StepFigures> out;
  for (size_t i = 0; i < s.starts.size(); ++i) {
    const size_t begin = s.starts[i];
    const size_t end = i + 1 < s.starts.size() ? s.starts[i + 1] : tl.samples.size();
    if (end <= begin) continue;
    StepFigures f{begin, UINT64_MAX, 0, 0};
    for (size_t j = begin; j < end; ++j) {
      const Sample at = tl.samples[j];
      f.min_allocated = std::min(f.min_allocated, at.allocated);
      f.peak_allocated = std::max(f.peak_allocated, at.allocated);
      f.peak_reserved = std::max(f.peak_reserved, at.reserved);
    }
    out.push_back(f);
  }
  return out;
}

// `first` on this thread and, with two threads, `second` on another at the same time; both done
// on return. An exception from either reaches the caller (the other has finished by then). Where
// no thread can be started, one after the other.
void both(int threads, const std::function<void()>& first, const std::function<void()>& second) {
  std::future<void> other;
  if (threads >= 2) {
    try {
      other = std::async(std::launch::async, second);
    } catch (const std::system_error&) {
    }
  }
  if (!other.valid()) {
    first();
    second();
    return;
  }
  try {
    first();
  } catch (...) {
    other.wait();
    throw;
  }
  other.get();
}

}  // namespace

Analysis analyze(const Trace& t, const AnalyzeOptions& o) {
  Analysis a;
  a.source = t.source;
  a.events = t.events.size();
  a.has_time = t.has_time;
  // Two rounds of two halves, each half reading only the trace and what came before its round
  // (the Categorizer and its cache belong to one half). Round 1: the timeline | the steps and
  // the free space at the end. Between: the per-step figures and the creep (one pass over the
  // samples each). Round 2: the live bytes by category at the peak | the free space at the
  // reserved peak and at each OOM (a replay each) and the sites that grew. Of the layouts tried,
  // the fastest on bench/mem_analyze (twice the events per second of one thread; the sites that
  // grew moved to the second half when the halves took 16 and 5 ms of a 94 MB snapshot's 47).
  both(o.threads, [&] { a.timeline = build_timeline(t); },
       [&] {
         a.steps = find_steps(t, o);
         a.at_end = fragmentation_before(t, t.events.size());
       });
  const Timeline& tl = a.timeline;
  a.per_step = step_figures(tl, a.steps);
  a.creep = creep(tl, a.steps);
  a.fragmentation = tl.peak.reserved > 0
                        ? 1 - static_cast<double>(tl.peak.active) / static_cast<double>(tl.peak.reserved)
                        : 0;
  both(o.threads,
       [&] {
         const Categorizer categories(t, o.rules);
         a.live_at_peak = live_by_category(t, categories, t.events.empty() ? SIZE_MAX : tl.peak_allocated_index);
       },
       [&] {
         a.at_peak = fragmentation_before(t, t.events.empty() ? 0 : tl.peak_reserved_index + 1);
         a.ooms = classify_ooms(t, tl, a.steps, a.creep);
         if (a.creep.verdict == "leak") a.grew = growing_sites(t, a.steps, static_cast<uint64_t>(kMinLeakBytes));
       });
  return a;
}

}  // namespace plumb::mem
