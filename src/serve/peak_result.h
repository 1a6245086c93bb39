// What plumb serve peak found: every probe (its load, each bound's tally and judgement, pass or
// fail and why) and the answer, per card (serve/peak.h runs the search; docs/serve.md).
// Each probe's run is one of ServeResult::runs, by index.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "serve/early_stop.h"

namespace plumb::serve {

// One bound of the SLO in one probe. A sample is a request (a gap between tokens for ITL); an
// error is a miss of every bound.
struct BoundTally {
  std::string metric;        // "ttft", "tpot", "itl", "e2e"
  double bound_ms = 0;
  double p99_ms = 0;         // the probe's observed p99 (of the requests that completed)
  std::int64_t samples = 0;
  std::int64_t misses = 0;   // over the bound, errors included
  EarlyStop judged{};        // at 99% confidence (serve/early_stop.h)
};

struct PeakProbe {
  double load = 0;            // requests/s (rate) or requests in flight (concurrency)
  std::int64_t requests = 0;  // judged in its last run (an undecided probe is rerun with more;
                              // a failing one may stop early)
  std::int64_t asked = 0;     // the request count its last run was given (--warmup's included)
  int runs = 1;               // 1, or more where it was extended or lengthened
  std::vector<BoundTally> bounds;
  std::int64_t errors = 0;
  bool passed = false;
  bool confident = true;      // judged at 99% confidence; false: on the observed p99 alone
  std::string why;            // one line: the bound that decided it, with its numbers
  int run_index = -1;         // into ServeResult::runs
};

struct PeakResult {
  std::string axis;       // "rate" or "concurrency"
  int cards = 1;
  bool early_stopping = true;
  std::vector<PeakProbe> probes;  // in the order they ran
  std::optional<double> best;     // the highest load that passed; none when none did
  double best_per_card = 0;       // best / cards: the rate per card, or the batch per card
  double lowest_failed = 0;       // the lowest load that failed; 0 when none did
  std::string stop_reason;        // why the search ended
  std::string reproduce;          // a plumb serve bench command line that reruns the best point
};

}  // namespace plumb::serve
