// Where training steps begin in a trace, and what the per-step minimum of allocated bytes says
// about a rising baseline (a leak).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/regex.h"
#include "mem/timeline.h"
#include "mem/trace.h"

namespace plumb::mem {

enum class StepSource { kRegex, kDetected, kNone };

struct Steps {
  StepSource source = StepSource::kNone;
  std::vector<size_t> starts;  // event index of each step's first event, ascending
  double confidence = 0;       // kDetected: share of repeating allocations that agree, 0..1
  std::string how;             // one line for the report: what the steps came from

  bool operator==(const Steps&) const = default;
};

// Steps begin where an event's stack starts matching `regex` (a function name, e.g.
// "train_step|optimizer.step") after one that did not.
Steps steps_from_regex(const Trace& t, const Regex& regex, const std::string& text);

// Without annotations: the repeating pattern of the allocations themselves. Each allocation is
// keyed by (size, stack); keys seen three times or more are counted, the most common count k is
// the number of steps, and the earliest key seen exactly k times marks each step's start.
// Confidence: the share of repeating keys whose count is k.
Steps detect_steps(const Trace& t);

// The fit uses complete steps: not the last (a snapshot or an OOM may cut it short), nor the
// first when the ring buffer dropped the trace's beginning.
struct Creep {
  size_t steps = 0;                     // complete steps fitted
  std::vector<uint64_t> step_min;       // per complete step: minimum allocated bytes
  std::vector<uint64_t> step_peak;      // per complete step: maximum allocated bytes
  double slope_bytes_per_step = 0;      // ordinary least squares over step_min
  double ci95_low = 0, ci95_high = 0;   // 95% confidence interval of the slope (Student's t)
  std::string verdict;                  // "leak", "stable", or "too few steps"

  bool operator==(const Creep&) const = default;
};

// A leak: the slope's 95% interval lies above zero and the rise over the trace is at least
// kMinLeakBytes and kMinLeakShare of the peak.
inline constexpr double kMinLeakBytes = 1 << 20;
inline constexpr double kMinLeakShare = 0.005;
inline constexpr size_t kMinCreepSteps = 4;

Creep creep(const Timeline& tl, const Steps& steps);

// The fit and the verdict shared by every input: ordinary least squares of `step_min` on the step
// numbers `x` (empty: 0, 1, 2, ...), the slope's 95% interval and the leak rule above, with the
// rise taken over x's span and the share against `peak_allocated`. Below kMinCreepSteps minima:
// "too few steps".
Creep creep_from_minima(std::vector<uint64_t> step_min, std::vector<uint64_t> step_peak,
                        uint64_t peak_allocated, const std::vector<double>& x = {});

// Ordinary least squares of y on x: slope and its standard error (x has two distinct values or
// more; y.size() == x.size()).
void least_squares(const std::vector<double>& x, const std::vector<uint64_t>& y, double& slope,
                   double& stderr_slope);

// Two-sided 95% quantile of Student's t with `dof` degrees of freedom.
double t_quantile_95(size_t dof);

}  // namespace plumb::mem
