// plumb serve peak: the highest load at which the SLO holds at p99, as MLPerf LoadGen's
// FindPeakPerformance (loadgen/loadgen.cc: FindBoundaries widens the load geometrically until a
// run fails, FindPeakPerformanceBinarySearch bisects between the last pass and the first fail).
// The load is a rate (open loop) or a concurrency (closed loop: the batch a card sees). Each probe
// runs at least --min-requests requests and --min-duration seconds and is judged by early
// stopping (serve/early_stop.h): a probe it cannot judge is rerun with more requests, up to
// --max-requests, rather than judged on noise (docs/serve.md).
//
// The search calls an injected probe, so that the tests run it on a model server with a known
// capacity; plumb serve peak's probe builds a workload, runs it and tallies its records.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "serve/peak_result.h"
#include "serve/request.h"
#include "serve/result.h"
#include "serve/summary.h"

namespace plumb::serve {

enum class SearchAxis { rate, concurrency };
std::string_view search_axis_name(SearchAxis axis);  // "rate", "concurrency"

// The fewest requests that can show a p99 holds at 99% confidence are min_passing(0) = 459; a
// probe's default is that, rounded up, so that a clean probe is judged in one run.
inline constexpr std::int64_t kDefaultMinRequests = 500;
// An undecided probe is rerun with more requests up to this (8× the minimum: a probe whose misses
// sit near 1% needs thousands to be judged either way).
inline constexpr std::int64_t kDefaultMaxRequests = 4000;
// Near capacity a queue grows slowly: a rate probe shorter than this may pass on an empty queue.
inline constexpr double kDefaultMinDurationS = 30;
// LoadGen's server_find_peak_qps_boundary_step_size default: each widening step doubles the load.
inline constexpr double kDefaultGrowth = 2;
// A rate search stops when the last pass and the first fail are within 2% of each other.
inline constexpr double kDefaultRateTolerance = 0.02;
inline constexpr int kDefaultMaxProbes = 24;

struct PeakOptions {
  SearchAxis axis = SearchAxis::concurrency;
  double start = 1;       // the first load probed
  double growth = kDefaultGrowth;
  double tolerance = kDefaultRateTolerance;  // rate only; a concurrency is bisected to 1
  double max_load = 0;    // 0: no ceiling
  std::int64_t min_requests = kDefaultMinRequests;
  double min_duration_s = 0;
  std::int64_t max_requests = kDefaultMaxRequests;
  int max_probes = kDefaultMaxProbes;
  bool early_stopping = true;  // false: judge each probe on its observed p99 alone
  int cards = 1;
};

// What one run at a load measured: each bound's tally (judged is filled by the search), and the
// run itself for the report.
struct ProbeOutcome {
  std::vector<BoundTally> bounds;
  std::int64_t requests = 0;  // judged: completed and failed (not those never released)
  std::int64_t errors = 0;
  ServeRun run;
};
using ProbeFn = std::function<ProbeOutcome(double load, std::int64_t requests)>;
using ProbeReport = std::function<void(const PeakProbe&)>;

struct PeakSearch {
  PeakResult peak;
  std::vector<ServeRun> runs;  // one per probe (its last run), PeakProbe::run_index into it
};

// Throws plumb::Error (exit 2) naming the option: a start below 1 or not whole for a concurrency,
// a growth ≤ 1, a tolerance ≤ 0, a ceiling below the start, min > max requests, cards < 1.
void check_peak_options(const PeakOptions& options);

// Throws plumb::Error (exit 2) for options that cannot search (a start below 1 for a
// concurrency, a growth ≤ 1, ...). `report` is told of each probe as it is judged.
PeakSearch find_peak(const PeakOptions& options, const ProbeFn& probe,
                     const ProbeReport& report = {});

// The tallies of one run's records against `slo`, with the p99s from its summary: TTFT, TPOT and
// E2E one sample per request (from its scheduled time; TPOT of requests with 2 tokens or more),
// ITL one per gap between chunks; a failed request is a sample and a miss of every bound.
std::vector<BoundTally> tally_bounds(const std::vector<RequestRecord>& records, const Slo& slo,
                                     const ServeSummary& summary);

// The same tallies as records end, for stopping a probe as soon as a bound fails at 99%
// confidence (RunControl::on_done): it stops releasing requests once `failed()`, and only after
// `least` records, so that a slow first few requests (a cold cache) do not end it.
class BoundWatch {
 public:
  BoundWatch(const Slo& slo, std::int64_t least);
  void add(const RequestRecord& record);
  bool failed() const;
  const std::vector<BoundTally>& tallies() const { return tallies_; }

 private:
  std::vector<BoundTally> tallies_;
  std::int64_t least_ = 0;
  std::int64_t seen_ = 0;
};

// The judgement of a probe from its tallies (filling each bound's `judged`).
struct ProbeJudgement {
  bool decided = true;   // false: early stopping could not judge it yet
  bool passed = false;
  std::int64_t more_needed = 0;  // undecided: requests still needed, were they all good
  std::string why;
};
ProbeJudgement judge_probe(std::vector<BoundTally>& bounds, std::int64_t requests,
                           std::int64_t errors, bool early_stopping);

}  // namespace plumb::serve
