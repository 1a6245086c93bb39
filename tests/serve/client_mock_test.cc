// run_load against the reference server (serve/mock_server.h), whose own record of when it wrote
// each token is the truth: the client's TTFT, inter-token and end-to-end times must match the
// truth's to within 0.5 ms at p99 (issue 31, "What it must show") at 1, 100 and 1,000 concurrent
// streams. The truth is what the server recorded, not its programmed timings, so a loaded machine
// that delays the server delays the truth too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "serve/client.h"
#include "serve/mock_server.h"

namespace plumb::serve {
namespace {

// The bound on the timing error, at p99.
constexpr double kToleranceMs = 0.5;

struct Observed {
  MockPlan plan;
  RunOutcome outcome;
  std::vector<MockTruth> truth;
};

Observed run_burst(int streams, int tokens, MockPlan plan, const char* api = "openai-completions") {
  MockConfig config;
  config.plan = plan;
  MockServer server(config);
  server.start();
  Endpoint endpoint;
  endpoint.url = server.base_url();
  endpoint.api = api;
  endpoint.model = "mock";
  Workload workload;
  for (int i = 0; i < streams; ++i) {
    RequestSpec spec;
    spec.index = i;
    spec.prompt = "a b c";
    spec.max_output_tokens = tokens;
    workload.requests.push_back(spec);  // all due at 0: `streams` at once
  }
  Observed observed;
  observed.plan = plan;
  observed.outcome = run_load(endpoint, workload, RunControl{});
  server.stop();
  observed.truth = server.truth();
  return observed;
}

double percentile_ms(std::vector<Nanos> values, double p) {
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100 * values.size()));
  return values[std::max<size_t>(rank, 1) - 1] / 1e6;
}

struct Series {
  std::vector<Nanos> ttft, itl, e2e;
};

Series client_series(const RunOutcome& outcome) {
  Series s;
  for (const RequestRecord& r : outcome.records) {
    EXPECT_TRUE(r.ok()) << r.error_detail;
    s.ttft.push_back(r.first_token_ns - r.scheduled_ns);
    for (size_t k = 1; k < r.chunks.size(); ++k)
      s.itl.push_back(r.chunks[k].at_ns - r.chunks[k - 1].at_ns);
    s.e2e.push_back(r.end_ns - r.scheduled_ns);
  }
  return s;
}

// Every request was due at the run's start.
Series truth_series(const std::vector<MockTruth>& truth, Nanos start_ns) {
  Series s;
  for (const MockTruth& t : truth) {
    s.ttft.push_back(t.token_ns.front() - start_ns);
    for (size_t k = 1; k < t.token_ns.size(); ++k)
      s.itl.push_back(t.token_ns[k] - t.token_ns[k - 1]);
    s.e2e.push_back(t.end_ns - start_ns);
  }
  return s;
}

// How late the server itself wrote its tokens against its programme, p99 in ms: on a machine too
// loaded to keep its own schedule to the tolerance, no client could be judged to it either.
double server_lateness_p99_ms(const std::vector<MockTruth>& truth, const MockPlan& plan) {
  std::vector<Nanos> late;
  for (const MockTruth& t : truth) {
    for (size_t k = 0; k < t.token_ns.size(); ++k) {
      late.push_back(t.token_ns[k] - (t.started_ns + plan.ttft_ns + Nanos(k) * plan.itl_ns));
    }
  }
  return late.empty() ? 0 : percentile_ms(late, 99);
}

void expect_within_tolerance(const Observed& observed, size_t streams, int tokens) {
  ASSERT_EQ(observed.outcome.records.size(), streams);
  ASSERT_EQ(observed.truth.size(), streams);
  for (const MockTruth& t : observed.truth) {
    ASSERT_EQ(t.token_ns.size(), static_cast<size_t>(tokens));
  }
  Series client = client_series(observed.outcome);
  Series truth = truth_series(observed.truth, observed.outcome.start_ns);
  // Whatever the load: nothing is read before it was written (each request's client time is at
  // least its truth, so every order statistic is too) — the clocks line up.
  for (double p : {0.0, 50.0, 99.0, 100.0}) {
    EXPECT_GE(percentile_ms(client.ttft, p), percentile_ms(truth.ttft, p)) << "TTFT p" << p;
    EXPECT_GE(percentile_ms(client.e2e, p), percentile_ms(truth.e2e, p)) << "E2E p" << p;
  }
  // Each figure beside its truth, for the reader of a failure and for docs/performance.md.
  for (double p : {50.0, 99.0}) {
    std::printf("%zu streams p%g: TTFT %+.3f ms, ITL %+.3f ms, E2E %+.3f ms (client - truth)\n",
                streams, p, percentile_ms(client.ttft, p) - percentile_ms(truth.ttft, p),
                percentile_ms(client.itl, p) - percentile_ms(truth.itl, p),
                percentile_ms(client.e2e, p) - percentile_ms(truth.e2e, p));
  }
  // The 0.5 ms bound is a speed figure (issue 31): judged on a quiet machine only, when asked
  // (PLUMB_STRICT_TIMING=1, as scripts/bench asks), never as a timed assertion of the suite.
  const char* strict = std::getenv("PLUMB_STRICT_TIMING");
  if (strict == nullptr || std::string(strict) != "1") {
    GTEST_SKIP() << "the 0.5 ms bound is judged with PLUMB_STRICT_TIMING=1 on a quiet machine";
  }
  double lateness = server_lateness_p99_ms(observed.truth, observed.plan);
  if (lateness > kToleranceMs) {
    GTEST_SKIP() << "the machine is too loaded to judge " << kToleranceMs
                 << " ms: the reference server itself wrote its tokens " << lateness
                 << " ms late (p99)";
  }
  for (double p : {50.0, 99.0}) {
    EXPECT_NEAR(percentile_ms(client.ttft, p), percentile_ms(truth.ttft, p), kToleranceMs)
        << "TTFT p" << p;
    EXPECT_NEAR(percentile_ms(client.itl, p), percentile_ms(truth.itl, p), kToleranceMs)
        << "ITL p" << p;
    EXPECT_NEAR(percentile_ms(client.e2e, p), percentile_ms(truth.e2e, p), kToleranceMs)
        << "E2E p" << p;
  }
}

MockPlan plan(Nanos ttft_ms, Nanos itl_ms) {
  MockPlan p;
  p.ttft_ns = ttft_ms * 1'000'000;
  p.itl_ns = itl_ms * 1'000'000;
  return p;
}

TEST(ServeClientMock, TimesMatchTheServersTruthAtOneStream) {
  expect_within_tolerance(run_burst(1, 20, plan(20, 5)), 1, 20);
}

TEST(ServeClientMock, TimesMatchTheServersTruthAt100Streams) {
  expect_within_tolerance(run_burst(100, 10, plan(20, 5)), 100, 10);
}

TEST(ServeClientMock, TimesMatchTheServersTruthAt1000Streams) {
  expect_within_tolerance(run_burst(1000, 5, plan(50, 20)), 1000, 5);
}

TEST(ServeClientMock, EveryApiReadsTheMocksStream) {
  for (const char* api : {"openai-completions", "openai-chat", "tgi", "triton"}) {
    Observed observed = run_burst(2, 3, plan(1, 1), api);
    ASSERT_EQ(observed.outcome.records.size(), 2u) << api;
    for (const RequestRecord& r : observed.outcome.records) {
      EXPECT_TRUE(r.ok()) << api << ": " << r.error_detail;
      EXPECT_EQ(r.chunks.size(), 3u) << api;
      EXPECT_EQ(r.output_tokens, 3) << api;
    }
  }
}

// A 500 in the middle of a run, and a server that drops, garbles or hangs a stream: each request
// ends with its own kind, and the run goes on.
TEST(ServeClientMock, FaultsMidRunAreCountedByKind) {
  struct Case {
    const char* plan;
    ErrorKind kind;
  };
  for (const Case& c :
       {Case{"", ErrorKind::http_status}, Case{"drop=2", ErrorKind::dropped},
        Case{"malformed=2", ErrorKind::malformed}, Case{"hang=2", ErrorKind::timeout}}) {
    MockConfig config;
    config.plan = plan(1, 1);
    bool mid_run_500 = c.kind == ErrorKind::http_status;
    if (mid_run_500) config.errors = {MockErrorRule{500, 1, 1, 0}};  // the second request only
    MockServer server(config);
    server.start();
    Endpoint endpoint;
    endpoint.url = server.base_url();
    endpoint.api = "openai-chat";
    endpoint.model = "mock";
    if (!mid_run_500) endpoint.headers = {std::string("X-Plumb-Mock: ") + c.plan};
    Workload workload;
    workload.closed_loop = true;
    workload.concurrency = 1;
    for (int i = 0; i < 3; ++i) {
      RequestSpec spec;
      spec.index = i;
      spec.prompt = "a";
      spec.max_output_tokens = 4;
      workload.requests.push_back(spec);
    }
    RunControl control;
    control.request_timeout_s = 0.3;
    RunOutcome outcome = run_load(endpoint, workload, control);
    server.stop();
    ASSERT_EQ(outcome.records.size(), 3u) << c.plan;
    for (const RequestRecord& r : outcome.records) {
      if (mid_run_500) {
        EXPECT_EQ(r.ok(), r.index != 1) << r.index << ": " << r.error_detail;
        if (r.index == 1) {
          EXPECT_EQ(r.error_detail.rfind("HTTP 500: ", 0), 0u) << r.error_detail;
        }
        continue;
      }
      EXPECT_EQ(r.error, c.kind) << c.plan << ": " << r.error_detail;
      EXPECT_EQ(r.chunks.size(), 2u) << c.plan;  // what came before the fault is kept
    }
  }
}

}  // namespace
}  // namespace plumb::serve
