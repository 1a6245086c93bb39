#include "mem/steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <unordered_map>

#include "mem/address_map.h"

namespace plumb::mem {
namespace {

bool stack_matches(const Trace& t, uint32_t stack, const Regex& regex,
                   std::vector<int8_t>& cache) {
  if (stack == kNoStack || stack >= t.stacks.size()) return false;
  if (cache[stack] < 0) {
    cache[stack] = 0;
    for (uint32_t f : t.stacks[stack]) {
      if (f < t.frames.size() && regex.search(t.frames[f].name)) {
        cache[stack] = 1;
        break;
      }
    }
  }
  return cache[stack] == 1;
}

uint64_t key_of(const Event& e) { return e.size * 1000003ULL ^ e.stack; }

// True when at least half the steps beginning at `starts` free something.
bool frees_in_most_steps(const Trace& t, const std::vector<size_t>& starts) {
  size_t with_free = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    const size_t end = i + 1 < starts.size() ? starts[i + 1] : t.events.size();
    for (size_t j = starts[i]; j < end; ++j) {
      if (t.events[j].action == Action::kFreeRequested) {
        ++with_free;
        break;
      }
    }
  }
  return 2 * with_free >= starts.size();
}

}  // namespace

// Ordinary least squares of y on x: slope and its standard error (x has two distinct values or
// more).
void least_squares(const std::vector<double>& x, const std::vector<uint64_t>& y, double& slope,
                   double& stderr_slope) {
  const double n = static_cast<double>(y.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    mx += x[i];
    my += static_cast<double>(y[i]);
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (static_cast<double>(y[i]) - my);
  }
  slope = sxy / sxx;
  double sse = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double r = static_cast<double>(y[i]) - (my + slope * (x[i] - mx));
    sse += r * r;
  }
  stderr_slope = std::sqrt(sse / (n - 2) / sxx);
}

double t_quantile_95(size_t dof) {
  // Two-sided 0.975 quantiles (any statistics table, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
  static const double kTable[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                  2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                  2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                  2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof == 0) return INFINITY;
  if (dof <= 30) return kTable[dof];
  if (dof <= 60) return 2.042 - (2.042 - 2.000) * (dof - 30) / 30.0;
  if (dof <= 120) return 2.000 - (2.000 - 1.980) * (dof - 60) / 60.0;
  return 1.960;
}

Steps steps_from_regex(const Trace& t, const Regex& regex, const std::string& text) {
  Steps s;
  s.source = StepSource::kRegex;
  std::vector<int8_t> cache(t.stacks.size(), -1);
  bool before = false;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const bool now = stack_matches(t, t.events[i].stack, regex, cache);
    if (now && !before) s.starts.push_back(i);
    before = now;
  }
  s.confidence = 1;
  s.how = fmt::format("{} step(s) from --step-regex '{}'", s.starts.size(), text);
  return s;
}

Steps detect_steps(const Trace& t) {
  Steps s;
  AddressMap<uint32_t> count;  // open addressing: a node per key made this pass slow
  for (const Event& e : t.events) {
    if (e.action == Action::kAlloc) ++count[key_of(e)];
  }
  std::unordered_map<uint32_t, size_t> keys_with_count;
  size_t repeating = 0;
  count.for_each([&](uint64_t, uint32_t n) {
    if (n < 3) return;
    ++keys_with_count[n];
    ++repeating;
  });
  if (repeating == 0) {
    s.how = "no steps: no allocation repeats three times (use --step-regex)";
    return s;
  }
  uint32_t k = 0;
  size_t best = 0;
  for (const auto& [n, keys] : keys_with_count) {
    if (keys > best || (keys == best && n < k)) {
      best = keys;
      k = n;
    }
  }
  // Anchors: the keys seen exactly k times, in order of first appearance. A step frees what it
  // allocated, so an anchor whose repeats have no free between them (the layers of one forward
  // pass, k gradients made at once) is passed over for the next.
  std::vector<uint64_t> anchors;
  AddressSet is_anchor;
  for (const Event& e : t.events) {
    if (e.action != Action::kAlloc || *count.find(key_of(e)) != k) continue;
    if (is_anchor.insert(key_of(e)).second) anchors.push_back(key_of(e));
  }
  for (uint64_t anchor : anchors) {
    std::vector<size_t> starts;
    for (size_t j = 0; j < t.events.size(); ++j) {
      if (t.events[j].action == Action::kAlloc && key_of(t.events[j]) == anchor) starts.push_back(j);
    }
    if (frees_in_most_steps(t, starts)) {
      s.starts = std::move(starts);
      break;
    }
  }
  if (s.starts.empty()) {
    s.how = fmt::format(
        "no steps: the allocations repeating {} times have no free between their repeats (one "
        "pass over many layers, not many steps; use --step-regex)", k);
    return s;
  }
  s.source = StepSource::kDetected;
  s.confidence = static_cast<double>(best) / static_cast<double>(repeating);
  s.how = fmt::format(
      "{} step(s) detected from the repeating allocations ({:.0f}% of the {} repeating (size, "
      "stack) pairs repeat {} times; --step-regex to set them)",
      s.starts.size(), 100 * s.confidence, repeating, k);
  return s;
}

Creep creep(const Timeline& tl, const Steps& steps) {
  std::vector<uint64_t> step_min, step_peak;
  for (size_t i = 0; i < steps.starts.size(); ++i) {
    const size_t begin = steps.starts[i];
    const size_t end = i + 1 < steps.starts.size() ? steps.starts[i + 1] : tl.samples.size();
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t j = begin; j < end; ++j) {
      const uint64_t allocated = tl.samples[j].allocated;
      lo = std::min(lo, allocated);
      hi = std::max(hi, allocated);
    }
    if (end > begin) {
      step_min.push_back(lo);
      step_peak.push_back(hi);
    }
  }
  // The last step may be cut short by the snapshot or by an OOM, and the first by the ring
  // buffer: the fit uses complete steps only.
  if (!step_min.empty()) {
    step_min.pop_back();
    step_peak.pop_back();
  }
  if (tl.dropped_frees > 0 && !step_min.empty()) {
    step_min.erase(step_min.begin());
    step_peak.erase(step_peak.begin());
  }
  return creep_from_minima(std::move(step_min), std::move(step_peak), tl.peak.allocated);
}

Creep creep_from_minima(std::vector<uint64_t> step_min, std::vector<uint64_t> step_peak,
                        uint64_t peak_allocated, const std::vector<double>& x) {
  assert(x.empty() || x.size() == step_min.size());
  Creep c;
  c.steps = step_min.size();
  c.step_min = std::move(step_min);
  c.step_peak = std::move(step_peak);
  if (c.steps < kMinCreepSteps) {
    c.verdict = "too few steps";
    return c;
  }
  std::vector<double> at = x;
  if (at.empty()) {
    for (size_t i = 0; i < c.steps; ++i) at.push_back(static_cast<double>(i));
  }
  double se = 0;
  least_squares(at, c.step_min, c.slope_bytes_per_step, se);
  const double t = t_quantile_95(c.steps - 2);
  c.ci95_low = c.slope_bytes_per_step - t * se;
  c.ci95_high = c.slope_bytes_per_step + t * se;
  const double rise = c.slope_bytes_per_step * (at.back() - at.front());
  const double floor = std::max(kMinLeakBytes, kMinLeakShare * static_cast<double>(peak_allocated));
  c.verdict = c.ci95_low > 0 && rise >= floor ? "leak" : "stable";
  return c;
}

}  // namespace plumb::mem
