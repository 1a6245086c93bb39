// What plumb serve reports and stores: one or more runs (a sweep's steps, a peak search's
// probes), each with its summary and, where taken, the server's series, energy and cost
// (JSON plumb.serve/1, report/serve_reporter).
#pragma once

#include "serve/cost.h"
#include "serve/energy.h"
#include "serve/peak_result.h"
#include "serve/server_metrics.h"
#include "serve/summary.h"

#include <optional>
#include <string>
#include <vector>

namespace plumb::serve {

struct ServeRun {
  int concurrency = 0;  // the cap or the closed loop's count; 0 = none
  double rate = 0;      // requests/s of an open loop; 0 = none (closed loop)
  ServeSummary summary;            // all requests of the run (of every repetition, pooled)
  std::vector<ServeSummary> repeats;  // --repeat N: each repetition alone, for plumb diff's noise
  std::optional<ServerScrape> server;
  std::optional<EnergyReport> energy;
  std::optional<CostReport> cost;
};

// How the runs were made, for the reader and for plumb diff's "what else changed".
struct ServeSetup {
  std::string url;  // the password of a URL masked
  std::string api;
  std::string model;
  std::string arrival;   // "poisson", "constant", "gamma(0.5)", "closed", "trace"
  std::string dataset;   // "random 512/128", "sharegpt FILE", "jsonl FILE", "trace FILE"
  std::uint64_t seed = 0;
  int cards = 1;         // --cards: per-card figures divide by this
  Slo slo;
};

struct ServeResult {
  ServeSetup setup;
  std::vector<ServeRun> runs;
  std::optional<PeakResult> peak;  // plumb serve peak: its probes (runs[] by index) and answer
};

}  // namespace plumb::serve
