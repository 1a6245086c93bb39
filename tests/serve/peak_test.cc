#include "serve/peak.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"

namespace plumb::serve {
namespace {

// A model server: below `capacity` every request meets the TPOT bound, above it every one misses
// (or a fraction `miss_fraction(load)` of them).
struct ModelServer {
  double capacity = 0;
  std::function<double(double)> miss_fraction;  // empty: a step at the capacity
  std::vector<std::pair<double, std::int64_t>> calls;

  ProbeOutcome operator()(double load, std::int64_t requests) {
    calls.push_back({load, requests});
    const double f = miss_fraction ? miss_fraction(load) : (load <= capacity ? 0.0 : 1.0);
    ProbeOutcome o;
    o.requests = requests;
    BoundTally t;
    t.metric = "tpot";
    t.bound_ms = 50;
    t.samples = requests;
    t.misses = static_cast<std::int64_t>(std::llround(f * static_cast<double>(requests)));
    t.p99_ms = f > 0.01 ? 80 : 40;
    o.bounds.push_back(t);
    o.run.rate = load;
    o.run.summary.duration_s = 60;
    return o;
  }
};

PeakSearch search(const PeakOptions& o, ModelServer& server) {
  return find_peak(o, [&](double load, std::int64_t n) { return server(load, n); });
}

std::vector<double> loads(const PeakResult& r) {
  std::vector<double> out;
  for (const PeakProbe& p : r.probes) out.push_back(p.load);
  return out;
}

TEST(PeakSearch, FindsAConcurrencyCapacityExactly) {
  ModelServer server{24, {}, {}};
  PeakOptions o;
  const PeakSearch s = search(o, server);
  EXPECT_EQ(loads(s.peak), (std::vector<double>{1, 2, 4, 8, 16, 32, 24, 28, 26, 25}));
  ASSERT_TRUE(s.peak.best.has_value());
  EXPECT_EQ(*s.peak.best, 24);
  EXPECT_EQ(s.peak.lowest_failed, 25);
  EXPECT_EQ(s.peak.stop_reason, "bracketed: concurrency 24 passes, concurrency 25 fails");
  EXPECT_EQ(s.runs.size(), s.peak.probes.size());
  EXPECT_EQ(s.peak.probes[6].run_index, 6);
}

TEST(PeakSearch, FindsARateCapacityWithinItsTolerance) {
  ModelServer server{37.3, {}, {}};
  PeakOptions o;
  o.axis = SearchAxis::rate;
  const PeakSearch s = search(o, server);
  ASSERT_TRUE(s.peak.best.has_value());
  EXPECT_LE(*s.peak.best, 37.3);
  EXPECT_GT(s.peak.lowest_failed, 37.3);
  EXPECT_LE(s.peak.lowest_failed - *s.peak.best, 0.02 * *s.peak.best);
  EXPECT_GE(*s.peak.best, 37.3 * 0.98);
  EXPECT_EQ(s.peak.axis, "rate");
}

TEST(PeakSearch, PerCardIsTheBatchEachCardSees) {
  ModelServer server{24, {}, {}};
  PeakOptions o;
  o.cards = 8;
  const PeakSearch s = search(o, server);
  EXPECT_EQ(s.peak.best_per_card, 3);
  EXPECT_EQ(s.peak.cards, 8);
}

TEST(PeakSearch, ARateProbeRunsAtLeastItsMinimumDuration) {
  ModelServer server{1000, {}, {}};
  PeakOptions o;
  o.axis = SearchAxis::rate;
  o.start = 20;
  o.min_duration_s = 30;
  o.max_load = 20;
  const PeakSearch s = search(o, server);
  ASSERT_EQ(server.calls.size(), 1u);
  EXPECT_EQ(server.calls[0].second, 600);  // 20/s × 30 s > the 500 minimum
}

TEST(PeakSearch, StopsAtTheCeiling) {
  ModelServer server{1000, {}, {}};
  PeakOptions o;
  o.max_load = 100;
  const PeakSearch s = search(o, server);
  EXPECT_EQ(loads(s.peak), (std::vector<double>{1, 2, 4, 8, 16, 32, 64, 100}));
  EXPECT_EQ(s.peak.stop_reason,
            "the SLO held at the ceiling, concurrency 100 (--max-load): the peak is at least that");
  EXPECT_EQ(*s.peak.best, 100);
}

TEST(PeakSearch, SaysSoWhenNoLoadMeetsTheSlo) {
  ModelServer server{0, {}, {}};
  const PeakSearch s = search(PeakOptions{}, server);
  EXPECT_FALSE(s.peak.best.has_value());
  EXPECT_EQ(s.peak.stop_reason, "no load meets the SLO: the lowest tried, concurrency 1, fails");
  EXPECT_EQ(s.peak.probes[0].why,
            "tpot p99 80 ms (bound 50 ms): 500 of 500 over (fails at 99% confidence)");
}

TEST(PeakSearch, GoesDownFromAStartThatFails) {
  ModelServer server{5, {}, {}};
  PeakOptions o;
  o.start = 16;
  const PeakSearch s = search(o, server);
  EXPECT_EQ(loads(s.peak), (std::vector<double>{16, 8, 4, 6, 5}));
  EXPECT_EQ(*s.peak.best, 5);
}

// 0.5% of requests over the bound: 3 of 500 cannot be judged (would need 1,001 in all), so the
// probe is rerun with more rather than judged on noise, and then holds.
TEST(PeakSearch, ExtendsAProbeEarlyStoppingCannotJudge) {
  ModelServer server{0, [](double) { return 0.005; }, {}};
  PeakOptions o;
  o.max_load = 1;
  const PeakSearch s = search(o, server);
  ASSERT_EQ(s.peak.probes.size(), 1u);
  const PeakProbe& p = s.peak.probes[0];
  EXPECT_GT(p.runs, 1);
  EXPECT_TRUE(p.passed);
  EXPECT_TRUE(p.confident);
  EXPECT_EQ(p.bounds[0].judged.judgement, Judgement::holds);
  EXPECT_EQ(server.calls[0].second, 500);
  EXPECT_EQ(server.calls[1].second, 1001);  // 500 + 501 more needed
}

// Exactly 1% over: never judgeable; at --max-requests it is judged on the observed p99 and said so.
TEST(PeakSearch, JudgesOnTheObservedP99AtTheRequestLimit) {
  ModelServer server{0, [](double) { return 0.01; }, {}};
  PeakOptions o;
  o.max_load = 1;
  o.max_requests = 1000;
  const PeakSearch s = search(o, server);
  const PeakProbe& p = s.peak.probes[0];
  EXPECT_FALSE(p.confident);
  EXPECT_TRUE(p.passed);
  EXPECT_EQ(p.requests, 1000);
  EXPECT_EQ(p.why,
            "undecided at 1000 requests (--max-requests), judged on the observed p99: tpot p99 "
            "40 ms (bound 50 ms): 10 of 1000 over");
}

TEST(PeakSearch, WithoutEarlyStoppingJudgesEachProbeOnItsP99) {
  ModelServer server{0, [](double) { return 0.02; }, {}};
  PeakOptions o;
  o.early_stopping = false;
  o.min_requests = 100;
  const PeakSearch s = search(o, server);
  EXPECT_EQ(server.calls.size(), 1u);
  EXPECT_FALSE(s.peak.probes[0].passed);
  EXPECT_FALSE(s.peak.probes[0].confident);
}

TEST(PeakSearch, StopsAfterItsProbeLimit) {
  ModelServer server{24, {}, {}};
  PeakOptions o;
  o.max_probes = 6;
  const PeakSearch s = search(o, server);
  EXPECT_EQ(s.peak.probes.size(), 6u);
  EXPECT_EQ(s.peak.stop_reason,
            "stopped after 6 probes (--max-probes): the peak is between concurrency 16 and "
            "concurrency 32");
}

TEST(PeakSearch, RefusesOptionsThatCannotSearch) {
  ModelServer server{24, {}, {}};
  PeakOptions o;
  o.start = 0.5;
  try {
    search(o, server);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "plumb serve peak: --start 0.5: a concurrency search starts at a whole number of "
                 "requests, 1 or more");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
  o.start = 1;
  o.growth = 1;
  EXPECT_THROW(search(o, server), Error);
}

TEST(PeakProbe, ErrorsAreMissesOfEveryBound) {
  RequestRecord good;
  good.scheduled_ns = 0;
  good.first_token_ns = 100'000'000;  // 100 ms
  good.end_ns = 1'100'000'000;
  good.output_tokens = 11;            // tpot 100 ms
  good.chunks = {{100'000'000, 1}, {200'000'000, 1}};
  RequestRecord failed;
  failed.error = ErrorKind::http_status;
  Slo slo;
  slo.ttft_ms = 150;
  slo.tpot_ms = 90;
  slo.itl_ms = 200;
  const std::vector<BoundTally> t = tally_bounds({good, failed}, slo, ServeSummary{});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].metric, "ttft");
  EXPECT_EQ(t[0].samples, 2);
  EXPECT_EQ(t[0].misses, 1);
  EXPECT_EQ(t[1].metric, "tpot");
  EXPECT_EQ(t[1].misses, 2);
  EXPECT_EQ(t[2].metric, "itl");
  EXPECT_EQ(t[2].samples, 2);  // one gap, one error
  EXPECT_EQ(t[2].misses, 1);
}

TEST(PeakProbe, JudgementSaysWhichBoundFailedAndWhy) {
  BoundTally ttft{"ttft", 2000, 150, 500, 0, {}};
  BoundTally tpot{"tpot", 50, 61.5, 500, 40, {}};
  std::vector<BoundTally> bounds{ttft, tpot};
  const ProbeJudgement j = judge_probe(bounds, 500, 3, true);
  EXPECT_TRUE(j.decided);
  EXPECT_FALSE(j.passed);
  EXPECT_EQ(j.why,
            "tpot p99 61.5 ms (bound 50 ms): 40 of 500 over (fails at 99% confidence); 3 "
            "request(s) failed");
  EXPECT_EQ(bounds[0].judged.judgement, Judgement::holds);
}

TEST(PeakProbe, UndecidedSaysHowManyMoreRequests) {
  std::vector<BoundTally> bounds{{"tpot", 50, 45, 100, 0, {}}};
  const ProbeJudgement j = judge_probe(bounds, 100, 0, true);
  EXPECT_FALSE(j.decided);
  EXPECT_EQ(j.more_needed, 359);
  EXPECT_EQ(j.why, "tpot p99 45 ms (bound 50 ms): 0 of 100 over: would need 359 more requests to judge");
}

}  // namespace
}  // namespace plumb::serve

namespace plumb::serve {
namespace {

RequestRecord slow_request() {
  RequestRecord r;
  r.first_token_ns = 10'000'000;
  r.end_ns = 110'000'000;
  r.output_tokens = 2;  // tpot 100 ms
  return r;
}

TEST(PeakProbe, AWatchFailsOnlyAfterItsLeastRecordsAndAConfidentMiss) {
  Slo slo;
  slo.tpot_ms = 50;
  BoundWatch watch(slo, 10);
  for (int i = 0; i < 9; ++i) watch.add(slow_request());
  EXPECT_FALSE(watch.failed());  // 9 of 9 over, but fewer than 10 seen
  watch.add(slow_request());
  EXPECT_TRUE(watch.failed());
  EXPECT_EQ(watch.tallies()[0].misses, 10);
}

TEST(PeakProbe, ConfidentFailIsTheFailsHalfOfEarlyStopping) {
  EXPECT_TRUE(confidently_fails(5, 5));
  EXPECT_FALSE(confidently_fails(500, 5));
  EXPECT_FALSE(confidently_fails(500, 0));
}

// A concurrency probe that passed in less than --min-duration is rerun with its count scaled up.
TEST(PeakSearch, APassShorterThanTheMinimumDurationIsLengthened) {
  std::vector<std::int64_t> counts;
  PeakOptions o;
  o.max_load = 1;
  o.min_duration_s = 30;
  find_peak(o, [&](double, std::int64_t n) {
    counts.push_back(n);
    ProbeOutcome out;
    out.requests = n;
    out.bounds.push_back({"tpot", 50, 40, n, 0, {}});
    out.run.summary.duration_s = static_cast<double>(n) / 100;  // 100 requests/s
    return out;
  });
  EXPECT_EQ(counts, (std::vector<std::int64_t>{500, 3300}));  // 500 × 30 / 5 × 1.1
}

}  // namespace
}  // namespace plumb::serve
