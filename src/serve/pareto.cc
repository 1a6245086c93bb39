#include "serve/pareto.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace plumb::serve {
namespace {

constexpr double kMsPerSecond = 1000;

std::string label_of(const ServeRun& r) {
  if (r.rate > 0 && r.concurrency > 0) return fmt::format("r={:g}/s c={}", r.rate, r.concurrency);
  if (r.rate > 0) return fmt::format("r={:g}/s", r.rate);
  return fmt::format("c={}", r.concurrency);
}

// b beats a on both figures and is strictly better on one.
bool dominates(const ParetoPoint& b, const ParetoPoint& a) {
  return b.tokens_per_s_per_user >= a.tokens_per_s_per_user &&
         b.tokens_per_s_per_card >= a.tokens_per_s_per_card &&
         (b.tokens_per_s_per_user > a.tokens_per_s_per_user ||
          b.tokens_per_s_per_card > a.tokens_per_s_per_card);
}

void mark_frontier(std::vector<ParetoPoint>& points) {
  for (ParetoPoint& a : points) {
    a.on_frontier = true;
    for (const ParetoPoint& b : points) {
      if (dominates(b, a)) {
        a.on_frontier = false;
        break;
      }
    }
  }
}

}  // namespace

std::vector<ParetoPoint> pareto_points(const std::vector<ServeRun>& runs, int cards,
                                       const std::vector<std::optional<bool>>& met_slo) {
  std::vector<ParetoPoint> points;
  for (size_t i = 0; i < runs.size(); ++i) {
    const ServeRun& r = runs[i];
    const double tpot = r.summary.tpot_ms.mean;
    if (r.summary.tpot_ms.count == 0 || !(tpot > 0)) continue;
    ParetoPoint p;
    p.label = label_of(r);
    p.concurrency = r.concurrency;
    p.rate = r.rate;
    p.tpot_mean_ms = tpot;
    p.tokens_per_s_per_user = kMsPerSecond / tpot;
    p.tokens_per_s_per_card = r.summary.output_tokens_per_second / std::max(cards, 1);
    if (i < met_slo.size()) p.met_slo = met_slo[i];
    if (r.cost && std::isfinite(r.cost->cost_per_million_output_tokens)) {
      p.cost_per_million_output_tokens = r.cost->cost_per_million_output_tokens;
    }
    points.push_back(p);
  }
  mark_frontier(points);
  return points;
}

std::vector<ParetoPoint> pareto_points(const ServeResult& result) {
  std::vector<std::optional<bool>> met(result.runs.size());
  if (result.peak) {
    for (const PeakProbe& p : result.peak->probes) {
      if (p.run_index >= 0 && static_cast<size_t>(p.run_index) < met.size()) met[p.run_index] = p.passed;
    }
  }
  return pareto_points(result.runs, result.setup.cards, met);
}

}  // namespace plumb::serve
