#include "serve/early_stop.h"

#include <cmath>

namespace plumb::serve {
namespace {

double log_choose(std::int64_t n, std::int64_t k) {
  return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
         std::lgamma(static_cast<double>(n - k) + 1);
}

// P(X ≤ misses) for X ~ Binomial(hits + misses, 1 − percentile): the chance of so few misses were
// the percentile exactly on the bound.
double odds(std::int64_t hits, std::int64_t misses, double percentile) {
  return binomial_cdf(misses, hits + misses, 1 - percentile);
}

}  // namespace

double binomial_cdf(std::int64_t k, std::int64_t n, double q) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  const double log_q = std::log(q);
  const double log_1q = std::log1p(-q);
  double sum = 0;
  for (std::int64_t i = 0; i <= k; ++i) {
    sum += std::exp(log_choose(n, i) + static_cast<double>(i) * log_q +
                    static_cast<double>(n - i) * log_1q);
  }
  return std::min(sum, 1.0);
}

std::int64_t min_passing(std::int64_t misses, double percentile, double confidence) {
  const double limit = 1 - confidence;
  std::int64_t hi = 64;
  while (!(odds(hi, misses, percentile) < limit)) hi *= 2;
  std::int64_t lo = 0;  // odds(lo) ≥ limit is not known yet: search [lo, hi] for the first pass
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (odds(mid, misses, percentile) < limit) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

std::int64_t max_passing_misses(std::int64_t samples, double percentile, double confidence) {
  const auto passes = [&](std::int64_t t) {
    return min_passing(t, percentile, confidence) + t <= samples;
  };
  if (!passes(0)) return -1;
  std::int64_t lo = 0;  // passes
  std::int64_t hi = samples;  // a pass needs at least one hit, so hi does not pass
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (passes(mid) ? lo : hi) = mid;
  }
  return lo;
}

std::string_view judgement_name(Judgement judgement) {
  switch (judgement) {
    case Judgement::holds: return "holds";
    case Judgement::fails: return "fails";
    case Judgement::undecided: break;
  }
  return "undecided";
}

EarlyStop early_stop(std::int64_t samples, std::int64_t misses, double percentile,
                     double confidence) {
  const std::int64_t needed = min_passing(misses, percentile, confidence) + misses;
  if (samples >= needed) return {Judgement::holds, 0};
  if (confidently_fails(samples, misses, percentile, confidence)) return {Judgement::fails, 0};
  return {Judgement::undecided, needed - samples};
}

bool confidently_fails(std::int64_t samples, std::int64_t misses, double percentile,
                       double confidence) {
  // P(X ≥ misses) = 1 − P(X ≤ misses − 1)
  return misses > 0 && 1 - binomial_cdf(misses - 1, samples, 1 - percentile) < 1 - confidence;
}

}  // namespace plumb::serve
