// `plumb diff` of two serving records (plumb.serve/1): run by run, matched by their load (a
// concurrency, a rate, or a rate capped by a concurrency), did a latency get longer or a
// throughput lower beyond the threshold and the runs' own noise.
//
// The verdicts and their rules are the comm diff's (diff.h, docs/diff.md): judge_time_change for
// the latencies (TTFT, TPOT, ITL, E2E at p50 and p99: lower is better) and judge_change for the
// throughputs (output tokens/s, goodput: higher is better); a 2× change is judged whatever the
// noise. The noise comes from --repeat: each figure is the median over a run's repetitions
// (ServeRun::repeats) and its σ ≈ median_sigma_per_mad_of(n) × their MAD, as the step diff has it
// from the steps; a run with fewer than kMinRepeatsForNoise repetitions has no noise estimate, and
// only the threshold judges (its pooled summary is then the figure). Exit codes as the comm diff:
// 1 on a regression, kTooNoisyExitCode when something changed within the noise, else 0.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "baseline/diff.h"
#include "serve/result.h"

namespace plumb::baseline {

inline constexpr const char* kServeDiffSchema = "plumb.serve-diff/1";

// Below this many repetitions in either run, the repetitions' spread is no estimate.
inline constexpr int kMinRepeatsForNoise = 3;

struct ServeFigureDiff {
  std::string figure;      // "tpot p99"
  std::string field;       // its plumb.serve/1 path: "tpot_ms.p99"
  std::string unit;        // "ms", "tok/s", "req/s"
  bool lower_is_better = true;
  double a = 0;            // NaN when the run did not measure it (no SLO: no goodput)
  double b = 0;
  double change = 0;       // (b − a) / a; NaN when either is missing or a is 0
  double noise = 0;        // kNoiseSigmas × σ of the change; 0 without enough repetitions
  Verdict verdict = Verdict::kSame;
};

struct ServeRunDiff {
  std::string load;        // "concurrency 8", "rate 10/s", "rate 10/s, concurrency 64"
  int concurrency = 0;
  double rate = 0;
  int repeats_a = 0;       // repetitions kept (0: the run alone)
  int repeats_b = 0;
  std::vector<ServeFigureDiff> figures;  // empty for a run only in A or only in B
  Verdict verdict = Verdict::kSame;      // kOnlyInA / kOnlyInB, or the worst of its figures
};

struct ServeDiff {
  std::string a_name;
  std::string b_name;
  double threshold = 0;
  std::vector<ServeRunDiff> runs;        // A's order, then the runs only in B
  std::vector<VariableDiff> variables;   // what else differs in the setups (kind "setting")
  std::vector<std::string> notes;        // e.g. too few repetitions to estimate the noise

  int regressions() const;               // figures with Verdict::kRegression
  int too_noisy() const;                 // figures with Verdict::kTooNoisy
  int exit_code() const;                 // 1, kTooNoisyExitCode or 0, as the comm diff
  std::string too_noisy_advice() const;  // empty unless too_noisy()
  std::string attribution_warning() const;  // empty when at most one setting differs
};

// Throws plumb::Error (exit 2) when A or B holds no run, or when they share no load point.
ServeDiff diff_serve(const serve::ServeResult& a, const serve::ServeResult& b,
                     const DiffOptions& options = {});

// plumb.serve-diff/1
nlohmann::json serve_diff_json(const ServeDiff& diff);

}  // namespace plumb::baseline
