// Issue 31: a stalled server shows its stall in the latencies (no coordinated omission). A rate
// of 20 requests/s capped at one in flight, against a server whose answers take about 105 ms:
// each request waits for the one before it, so its latency from the scheduled time grows by
// about 55 ms a request, while from the time it was sent it stays near 105 ms — the figure a
// client that times from sending reports (vLLM issue 54101). The engine and the metrics report
// the first, and count the wait as dispatch delay, not as the client's own lag.
#include <gtest/gtest.h>

#include "serve/client.h"
#include "serve/mock_server.h"
#include "serve/summary.h"

namespace plumb::serve {
namespace {

constexpr Nanos kMs = 1'000'000;
constexpr int kRequests = 8;
constexpr Nanos kGap = 50 * kMs;  // 20 requests/s

TEST(CoordinatedOmission, AStalledServerShowsInTheLatenciesFromTheScheduledTime) {
  MockConfig config;
  config.plan.ttft_ns = 5 * kMs;
  config.plan.itl_ns = 1 * kMs;
  config.plan.stall_after = 1;      // after the first token the server stalls
  config.plan.stall_ns = 100 * kMs;
  MockServer server(config);
  server.start();
  Endpoint endpoint;
  endpoint.url = server.base_url();
  endpoint.api = "openai-completions";
  endpoint.model = "mock";
  Workload workload;
  workload.concurrency = 1;
  for (int i = 0; i < kRequests; ++i) {
    RequestSpec spec;
    spec.index = i;
    spec.prompt = "a b c";
    spec.max_output_tokens = 3;
    spec.scheduled_ns = i * kGap;
    workload.requests.push_back(spec);
  }
  const RunOutcome outcome = run_load(endpoint, workload, RunControl{});
  server.stop();
  ASSERT_EQ(outcome.records.size(), static_cast<size_t>(kRequests));
  const RequestRecord& last = outcome.records.back();
  ASSERT_TRUE(last.ok()) << last.error_detail;
  // Each answer takes at least 5 + 100 + 2 ms; the last request could only be sent after the
  // seven before it: at least 7 × 107 ms after the run's start, 350 ms after it was due.
  const Nanos from_scheduled = last.end_ns - last.scheduled_ns;
  const Nanos from_sent = last.end_ns - last.sent_ns;
  EXPECT_GE(last.sent_ns, 7 * 107 * kMs);
  EXPECT_GE(from_scheduled, from_sent + 7 * 107 * kMs - last.scheduled_ns);
  EXPECT_GE(last.ready_ns - last.scheduled_ns, 7 * 107 * kMs - 7 * kGap);
  const ServeSummary s = summarize(outcome.records, outcome.duration_ns, 0, Slo{});
  // E2E's max is the last request's wait plus its own answer; dispatch delay carries the wait.
  EXPECT_DOUBLE_EQ(s.e2e_ms.max, static_cast<double>(from_scheduled) / 1e6);
  EXPECT_GE(s.dispatch_delay_ms.max, (7 * 107 - 7 * 50) * 1.0);
  EXPECT_GE(s.e2e_ms.max, s.dispatch_delay_ms.max + 107);
  // The wait was for a slot, not the client's own lag: sent when the slot freed, a small part of
  // the wait (a bound no loaded machine comes near: the wait is over 390 ms).
  EXPECT_LT(s.client_lag_ms.p50, s.dispatch_delay_ms.max / 10);
}

}  // namespace
}  // namespace plumb::serve
