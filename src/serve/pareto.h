// The throughput–interactivity trade-off of a sweep's runs or a peak search's probes: each run's
// tokens/s per user (how fast one stream reads: 1000 / its mean TPOT in ms — the decode speed,
// prefill excluded, as NVIDIA's and SemiAnalysis's "tokens/s/user" charts plot it) against its
// tokens/s per card (the run's output tokens/s / cards), and the Pareto frontier: the runs no
// other run beats on both (docs/serve.md, "Pareto").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "serve/result.h"

namespace plumb::serve {

struct ParetoPoint {
  std::string label;   // "c=8", "r=10/s", "r=10/s c=64"
  int concurrency = 0;
  double rate = 0;
  double tokens_per_s_per_user = 0;
  double tokens_per_s_per_card = 0;
  double tpot_mean_ms = 0;
  bool on_frontier = false;
  std::optional<bool> met_slo;  // a peak probe's pass or fail; none for a sweep's run
  std::optional<double> cost_per_million_output_tokens;  // where the run has a cost
};

// One point per run with a TPOT (runs without one, or without output, are left out), in the
// runs' order; the frontier marked. `met_slo[i]`, where given, is run i's verdict.
std::vector<ParetoPoint> pareto_points(const std::vector<ServeRun>& runs, int cards,
                                       const std::vector<std::optional<bool>>& met_slo = {});

// The runs of a peak search, each with its probe's verdict.
std::vector<ParetoPoint> pareto_points(const ServeResult& result);

}  // namespace plumb::serve
