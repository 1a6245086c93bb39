// Early stopping for a percentile bound, after MLPerf LoadGen (loadgen/early_stopping.cc and the
// Server scenario of loadgen/results.cc): with n samples of which k missed a bound, can we say
// with 99% confidence that the 99th percentile holds (or that it fails), and if neither, how many
// more samples would judge it (docs/serve.md, "Early stopping").
//
// A sample misses when it is over the bound (an error is a miss of every bound). If the true
// fraction of misses were exactly 1 − p (p = 0.99), the number of misses in n samples would be
// Binomial(n, 1 − p). The percentile *holds* when seeing k or fewer misses would then be rarer
// than 1 − c (c = 0.99): P(X ≤ k) < 1 − c, i.e. the true fraction is under 1 − p with confidence
// c (LoadGen's test, `odds(h, t, p, d) < 1 − c` with tolerance d = 0). It *fails* when seeing k or
// more would be that rare: P(X ≥ k) < 1 − c (the same test turned round; LoadGen only says
// "unsuccessful"). Otherwise it is undecided: LoadGen's "would need to run at least N more queries,
// with the run being successful if every additional query were under latency".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace plumb::serve {

// MLPerf's server percentile and confidence (loadgen/results.cc: confidence = 0.99; the LLM
// benchmarks' TTFT/TPOT constraints are 99th percentiles).
inline constexpr double kSloPercentile = 0.99;
inline constexpr double kEarlyStopConfidence = 0.99;

// P(X ≤ k) for X ~ Binomial(n, q); 1 when k ≥ n, 0 when k < 0.
double binomial_cdf(std::int64_t k, std::int64_t n, double q);

// The fewest samples within the bound, h, such that with `misses` over it the `percentile` holds
// with `confidence`: P(Binomial(h + misses, 1 − percentile) ≤ misses) < 1 − confidence
// (LoadGen's MinPassingQueriesFinder with tolerance 0). 459 for 0 misses at p99/99%.
std::int64_t min_passing(std::int64_t misses, double percentile = kSloPercentile,
                         double confidence = kEarlyStopConfidence);

// The most misses `samples` samples may have and the percentile still hold with `confidence`
// (LoadGen's SingleStream "would discard t − 1 highest latency queries" is this t minus 1);
// −1 when even none would do (samples < min_passing(0)).
std::int64_t max_passing_misses(std::int64_t samples, double percentile = kSloPercentile,
                                double confidence = kEarlyStopConfidence);

enum class Judgement { holds, fails, undecided };
std::string_view judgement_name(Judgement judgement);  // "holds", "fails", "undecided"

struct EarlyStop {
  Judgement judgement = Judgement::undecided;
  // undecided: samples still needed to judge it holds, were every one of them within the bound.
  std::int64_t more_needed = 0;
};

EarlyStop early_stop(std::int64_t samples, std::int64_t misses,
                     double percentile = kSloPercentile,
                     double confidence = kEarlyStopConfidence);

// The fails half of early_stop alone (cheap enough to ask after every request of a run):
// P(Binomial(samples, 1 − percentile) ≥ misses) < 1 − confidence.
bool confidently_fails(std::int64_t samples, std::int64_t misses,
                       double percentile = kSloPercentile,
                       double confidence = kEarlyStopConfidence);

}  // namespace plumb::serve
