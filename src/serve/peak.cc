#include "serve/peak.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/error.h"

namespace plumb::serve {
namespace {

// A rate search that fails at its start halves the rate at most this many times (start / 1024).
constexpr int kMostHalvings = 10;
// A probe shorter than --min-duration is rerun with its request count scaled up by the shortfall
// and this margin, so that the rerun does not fall just short again.
constexpr double kDurationMargin = 1.1;
// Rounding slack for a count computed in floating point (500 × 30 / 5 × 1.1 is 3300.0000000000005).
constexpr double kCeilSlack = 1e-6;
// An undecided probe's rerun has at least this many times its requests (early stopping's "more
// needed" assumes every new request is good; one more miss needs ~200 more at p99).
constexpr double kExtendFactor = 1.5;

// ---- Tallies ----------------------------------------------------------------------------------

struct MetricSpec {
  const char* metric;
  std::optional<double> Slo::*bound;
  Distribution ServeSummary::*distribution;
};
constexpr MetricSpec kMetrics[] = {
    {"ttft", &Slo::ttft_ms, &ServeSummary::ttft_ms},
    {"tpot", &Slo::tpot_ms, &ServeSummary::tpot_ms},
    {"itl", &Slo::itl_ms, &ServeSummary::itl_ms},
    {"e2e", &Slo::e2e_ms, &ServeSummary::e2e_ms},
};

// The samples of one metric in one good request (ms).
std::vector<double> samples_of(std::string_view metric, const RequestRecord& r) {
  if (metric == "ttft") return {ms(r.first_token_ns - r.scheduled_ns)};
  if (metric == "e2e") return {ms(r.end_ns - r.scheduled_ns)};
  if (metric == "tpot") {
    if (r.output_tokens < 2 || r.first_token_ns == kNoTime) return {};
    return {ms(r.end_ns - r.first_token_ns) / (r.output_tokens - 1)};
  }
  std::vector<double> gaps;
  for (size_t i = 1; i < r.chunks.size(); ++i) gaps.push_back(ms(r.chunks[i].at_ns - r.chunks[i - 1].at_ns));
  return gaps;
}

void add_record(BoundTally& t, const RequestRecord& r) {
  if (!r.ok()) {
    ++t.samples;
    ++t.misses;
    return;
  }
  for (double v : samples_of(t.metric, r)) {
    ++t.samples;
    if (v > t.bound_ms) ++t.misses;
  }
}

// ---- Judging a probe --------------------------------------------------------------------------

std::string bound_text(const BoundTally& b) {
  return fmt::format("{} p99 {:.4g} ms (bound {:g} ms): {} of {} over", b.metric, b.p99_ms,
                     b.bound_ms, b.misses, b.samples);
}

// Observed: a bound holds when at most 1% of its samples miss (the p99 within it).
bool holds_observed(const BoundTally& b) {
  return b.samples > 0 &&
         static_cast<double>(b.misses) <= (1 - kSloPercentile) * static_cast<double>(b.samples);
}

std::string join_parts(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

ProbeJudgement judge_observed(const std::vector<BoundTally>& bounds) {
  ProbeJudgement j;
  std::vector<std::string> failing, all;
  for (const BoundTally& b : bounds) {
    all.push_back(bound_text(b));
    if (!holds_observed(b)) failing.push_back(bound_text(b));
  }
  j.passed = failing.empty();
  j.why = join_parts(j.passed ? all : failing);
  return j;
}

}  // namespace

std::string_view search_axis_name(SearchAxis axis) {
  return axis == SearchAxis::rate ? "rate" : "concurrency";
}

std::vector<BoundTally> tally_bounds(const std::vector<RequestRecord>& records, const Slo& slo,
                                     const ServeSummary& summary) {
  BoundWatch watch(slo, 0);
  for (const RequestRecord& r : records) watch.add(r);
  std::vector<BoundTally> out = watch.tallies();
  for (BoundTally& t : out) {
    for (const MetricSpec& spec : kMetrics) {
      if (t.metric == spec.metric) t.p99_ms = (summary.*spec.distribution).p99;
    }
  }
  return out;
}

BoundWatch::BoundWatch(const Slo& slo, std::int64_t least) : least_(least) {
  for (const MetricSpec& spec : kMetrics) {
    if (!(slo.*spec.bound)) continue;
    BoundTally t;
    t.metric = spec.metric;
    t.bound_ms = *(slo.*spec.bound);
    tallies_.push_back(t);
  }
}

void BoundWatch::add(const RequestRecord& record) {
  ++seen_;
  for (BoundTally& t : tallies_) add_record(t, record);
}

bool BoundWatch::failed() const {
  if (seen_ < least_) return false;
  return std::any_of(tallies_.begin(), tallies_.end(), [](const BoundTally& t) {
    return confidently_fails(t.samples, t.misses);
  });
}

ProbeJudgement judge_probe(std::vector<BoundTally>& bounds, std::int64_t requests,
                           std::int64_t errors, bool early_stopping) {
  if (requests == 0) return {true, false, 0, "no request was judged"};
  for (BoundTally& b : bounds) b.judged = early_stop(b.samples, b.misses);
  ProbeJudgement j = judge_observed(bounds);
  if (early_stopping) {
    std::vector<std::string> failing, undecided;
    for (const BoundTally& b : bounds) {
      if (b.judged.judgement == Judgement::fails) failing.push_back(bound_text(b));
      if (b.judged.judgement == Judgement::undecided) {
        undecided.push_back(fmt::format("{}: would need {} more requests to judge", bound_text(b),
                                        b.judged.more_needed));
        j.more_needed = std::max(j.more_needed, b.judged.more_needed);
      }
    }
    if (!failing.empty()) {
      j = {true, false, 0, join_parts(failing) + " (fails at 99% confidence)"};
    } else if (!undecided.empty()) {
      j.decided = false;
      j.why = join_parts(undecided);
    } else {
      j.why += " (holds at 99% confidence)";
    }
  }
  if (errors > 0) j.why += fmt::format("; {} request(s) failed", errors);
  return j;
}

namespace {

class Search {
 public:
  Search(const PeakOptions& o, const ProbeFn& probe, const ProbeReport& report)
      : o_(o), probe_(probe), report_(report) {
    out_.peak.axis = search_axis_name(o.axis);
    out_.peak.cards = o.cards;
    out_.peak.early_stopping = o.early_stopping;
  }

  PeakSearch run() {
    bracket();
    bisect();
    finish();
    return std::move(out_);
  }

 private:
  bool concurrency() const { return o_.axis == SearchAxis::concurrency; }
  bool out_of_probes() const { return static_cast<int>(out_.peak.probes.size()) >= o_.max_probes; }
  std::string load_text(double x) const {
    return concurrency() ? fmt::format("concurrency {:g}", x) : fmt::format("rate {:.4g}/s", x);
  }

  std::int64_t first_requests(double load) const {
    std::int64_t n = o_.min_requests;
    if (!concurrency()) n = std::max(n, static_cast<std::int64_t>(std::ceil(load * o_.min_duration_s)));
    return std::min(n, o_.max_requests);
  }

  // Runs one probe at `load` until it is judged (or the request limit is reached).
  bool probe(double load) {
    PeakProbe p;
    p.load = load;
    p.runs = 0;
    std::int64_t n = first_requests(load);
    ProbeOutcome outcome;
    ProbeJudgement j;
    for (;;) {
      outcome = probe_(load, n);
      ++p.runs;
      p.requests = outcome.requests;
      p.asked = n;
      j = judge_probe(outcome.bounds, outcome.requests, outcome.errors, o_.early_stopping);
      const double took = outcome.run.summary.duration_s;
      if (took < o_.min_duration_s && n < o_.max_requests && j.decided && j.passed && took > 0) {
        n = std::min(o_.max_requests,
                     static_cast<std::int64_t>(std::ceil(n * o_.min_duration_s / took * kDurationMargin - kCeilSlack)));
        continue;
      }
      if (j.decided) break;
      if (n >= o_.max_requests) {
        p.confident = false;
        const ProbeJudgement seen = judge_observed(outcome.bounds);
        j.passed = seen.passed;
        j.why = fmt::format("undecided at {} requests (--max-requests), judged on the observed "
                            "p99: {}", outcome.requests, seen.why);
        break;
      }
      n = std::min(o_.max_requests,
                   std::max(n + j.more_needed, static_cast<std::int64_t>(std::ceil(n * kExtendFactor))));
    }
    if (!o_.early_stopping) p.confident = false;
    p.bounds = outcome.bounds;
    p.errors = outcome.errors;
    p.passed = j.passed;
    p.why = j.why;
    p.run_index = static_cast<int>(out_.runs.size());
    out_.runs.push_back(std::move(outcome.run));
    out_.peak.probes.push_back(p);
    if (report_) report_(p);
    if (p.passed) {
      pass_ = pass_ ? std::max(*pass_, load) : load;
    } else {
      fail_ = fail_ ? std::min(*fail_, load) : load;
    }
    return p.passed;
  }

  std::optional<double> up(double x) const {
    double y = concurrency() ? std::max(x + 1, std::round(x * o_.growth)) : x * o_.growth;
    if (o_.max_load > 0) y = std::min(y, o_.max_load);
    return y > x ? std::optional<double>(y) : std::nullopt;
  }

  std::optional<double> down(double x) const {
    if (concurrency()) {
      const double y = std::min(x - 1, std::round(x / o_.growth));
      return y >= 1 ? std::optional<double>(y) : std::nullopt;
    }
    const double y = x / o_.growth;
    return y >= o_.start / std::pow(2.0, kMostHalvings) ? std::optional<double>(y) : std::nullopt;
  }

  // FindBoundaries: up from the start while it passes, down while it fails.
  void bracket() {
    std::optional<double> x = o_.start;
    while (x && !out_of_probes()) {
      const bool passed = probe(*x);
      if (pass_ && fail_) return;
      x = passed ? up(*x) : down(*x);
      if (!x) {
        out_.peak.stop_reason =
            passed ? fmt::format("the SLO held at the ceiling, {} (--max-load): the peak is at "
                                 "least that", load_text(pass_.value()))
                   : fmt::format("no load meets the SLO: the lowest tried, {}, fails",
                                 load_text(fail_.value()));
      }
    }
  }

  bool finished() const {
    if (concurrency()) return *fail_ - *pass_ <= 1;
    return *fail_ - *pass_ <= o_.tolerance * *pass_;
  }

  double middle() const {
    return concurrency() ? std::floor((*pass_ + *fail_) / 2) : (*pass_ + *fail_) / 2;
  }

  // FindPeakPerformanceBinarySearch.
  void bisect() {
    if (!pass_ || !fail_) return;
    while (!finished() && !out_of_probes()) probe(middle());
    out_.peak.stop_reason =
        finished() ? fmt::format("bracketed: {} passes, {} fails{}", load_text(*pass_),
                                 load_text(*fail_),
                                 concurrency() ? "" : fmt::format(" (within {:g}%)", 100 * o_.tolerance))
                   : "";
  }

  void finish() {
    PeakResult& r = out_.peak;
    if (r.stop_reason.empty() && out_of_probes()) {
      r.stop_reason = fmt::format("stopped after {} probes (--max-probes){}", o_.max_probes,
                                  pass_ && fail_ ? fmt::format(": the peak is between {} and {}",
                                                               load_text(*pass_), load_text(*fail_))
                                                 : "");
    }
    r.best = pass_;
    r.best_per_card = pass_ ? *pass_ / o_.cards : 0;
    r.lowest_failed = fail_.value_or(0);
  }

  const PeakOptions& o_;
  const ProbeFn& probe_;
  const ProbeReport& report_;
  PeakSearch out_;
  std::optional<double> pass_, fail_;
};

}  // namespace

void check_peak_options(const PeakOptions& o) {
  const auto bad = [](const std::string& m) { throw Error("plumb serve peak: " + m, ExitCode::kBadInput); };
  if (o.axis == SearchAxis::concurrency && (o.start < 1 || o.start != std::floor(o.start))) {
    bad(fmt::format("--start {:g}: a concurrency search starts at a whole number of requests, 1 or more", o.start));
  }
  if (!(o.start > 0)) bad(fmt::format("--start {:g}: expected a rate above 0", o.start));
  if (!(o.growth > 1)) bad(fmt::format("--growth {:g}: expected a factor above 1", o.growth));
  if (!(o.tolerance > 0)) bad(fmt::format("--tolerance {:g}: expected a fraction above 0", o.tolerance));
  if (o.max_load > 0 && o.max_load < o.start) {
    bad(fmt::format("--max-load {:g} is below --start {:g}", o.max_load, o.start));
  }
  if (o.min_requests < 1 || o.max_requests < o.min_requests) {
    bad(fmt::format("--min-requests {} and --max-requests {}: expected 1 ≤ min ≤ max",
                    o.min_requests, o.max_requests));
  }
  if (o.cards < 1) bad(fmt::format("--cards {}: expected 1 or more", o.cards));
}

PeakSearch find_peak(const PeakOptions& options, const ProbeFn& probe, const ProbeReport& report) {
  check_peak_options(options);
  return Search(options, probe, report).run();
}

}  // namespace plumb::serve
