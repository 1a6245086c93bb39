// summarize() against records whose truth is known by construction (docs/serve.md,
// "Metrics"): every latency from the scheduled time, numpy's linear percentiles.
#include "serve/summary.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "serve/measure.h"

namespace plumb::serve {
namespace {

constexpr Nanos kMs = 1'000'000;

// A completed request: due at `at`, ready and sent as given, one 1-token chunk at each time in
// `chunks` (ms), ending with the last.
RequestRecord done(std::int64_t index, double at, double ready, double sent,
                   std::vector<double> chunks) {
  RequestRecord r;
  r.index = index;
  r.scheduled_ns = static_cast<Nanos>(at * kMs);
  r.ready_ns = static_cast<Nanos>(ready * kMs);
  r.sent_ns = static_cast<Nanos>(sent * kMs);
  for (double c : chunks) r.chunks.push_back({static_cast<Nanos>(c * kMs), 1});
  r.first_token_ns = r.chunks.front().at_ns;
  r.end_ns = r.chunks.back().at_ns;
  r.output_tokens = static_cast<int>(chunks.size());
  r.input_tokens = 10;
  return r;
}

RequestRecord failed(ErrorKind kind, double at) {
  RequestRecord r;
  r.scheduled_ns = r.ready_ns = r.sent_ns = static_cast<Nanos>(at * kMs);
  r.end_ns = r.sent_ns + kMs;
  r.error = kind;
  return r;
}

TEST(ServeSummary, TheWorkedExampleFromTheScheduledTime) {
  // Due at 0, sent at 2 ms (ready at 1.5), chunks at 50, 60, 70 ms, ended at 70 ms.
  const ServeSummary s = summarize({done(0, 0, 1.5, 2, {50, 60, 70})}, 1000 * kMs, 0, {});
  EXPECT_DOUBLE_EQ(s.ttft_ms.p50, 50);
  EXPECT_DOUBLE_EQ(s.tpot_ms.p50, 10);  // (70 - 50) / (3 - 1)
  EXPECT_DOUBLE_EQ(s.e2e_ms.max, 70);
  EXPECT_DOUBLE_EQ(s.dispatch_delay_ms.p50, 2);
  EXPECT_DOUBLE_EQ(s.client_lag_ms.p50, 0.5);
  EXPECT_EQ(s.itl_ms.count, 2);
  EXPECT_DOUBLE_EQ(s.itl_ms.mean, 10);
  EXPECT_EQ(s.completed, 1);
  EXPECT_EQ(s.output_tokens, 3);
  EXPECT_DOUBLE_EQ(s.requests_per_second, 1);
  EXPECT_DOUBLE_EQ(s.output_tokens_per_second, 3);
  EXPECT_DOUBLE_EQ(s.total_tokens_per_second, 13);
  EXPECT_EQ(s.token_source, "chunks");
}

TEST(ServeSummary, AStalledRequestShowsItsQueueingInTheNextOnesTtft) {
  // An open loop capped at one in flight: the first request stalls 100 ms; the next two, due at
  // 10 and 20 ms, wait for its slot. Their TTFT counts from when they were due, not sent.
  const ServeSummary s = summarize(
      {done(0, 0, 0, 0, {100}), done(1, 10, 100, 100, {105}), done(2, 20, 105, 105, {110})},
      110 * kMs, 0, {});
  EXPECT_DOUBLE_EQ(s.ttft_ms.max, 100);
  EXPECT_DOUBLE_EQ(s.ttft_ms.p50, 95);  // {90, 95, 100}, not {5, 5, 100}
  EXPECT_DOUBLE_EQ(s.dispatch_delay_ms.p50, 85);
  EXPECT_DOUBLE_EQ(s.client_lag_ms.max, 0);  // the wait was for the slot, not the client
  EXPECT_TRUE(s.client_kept_up);
  EXPECT_EQ(s.keep_up_detail, "the client kept up: lag p99 0 ms <= 1 ms");
}

TEST(ServeSummary, PercentilesAreNumpysLinearInterpolation) {
  std::vector<RequestRecord> records;
  for (int i = 1; i <= 100; ++i) records.push_back(done(i, 0, 0, 0, {static_cast<double>(i)}));
  const ServeSummary s = summarize(records, 1000 * kMs, 0, {});
  EXPECT_DOUBLE_EQ(s.ttft_ms.p50, 50.5);
  EXPECT_NEAR(s.ttft_ms.p90, 90.1, 1e-9);
  EXPECT_NEAR(s.ttft_ms.p99, 99.01, 1e-9);
  EXPECT_DOUBLE_EQ(s.ttft_ms.max, 100);
  EXPECT_DOUBLE_EQ(s.ttft_ms.mean, 50.5);
  EXPECT_EQ(s.tpot_ms.count, 0);  // one token each: no TPOT
}

TEST(ServeSummary, AChunkOfKTokensCountsAsKGapsOfItsGapOverK) {
  RequestRecord r = done(0, 0, 0, 0, {10, 40});
  r.chunks[1].tokens = 3;
  r.output_tokens = 4;
  const ServeSummary s = summarize({r}, 1000 * kMs, 0, {});
  EXPECT_EQ(s.itl_ms.count, 3);
  EXPECT_DOUBLE_EQ(s.itl_ms.max, 10);
  EXPECT_DOUBLE_EQ(s.tpot_ms.p50, 10);  // (40 - 10) / (4 - 1)
}

TEST(ServeSummary, ErrorsAreCountedByKindAndLeftOutOfLatenciesAndThroughput) {
  const ServeSummary s =
      summarize({done(0, 0, 0, 0, {10, 20, 30}), failed(ErrorKind::http_status, 5),
                 failed(ErrorKind::http_status, 6), failed(ErrorKind::connect, 7)},
                2000 * kMs, 4, {});
  EXPECT_EQ(s.completed, 1);
  EXPECT_EQ(s.errors, 3);
  EXPECT_EQ(s.errors_by_kind,
            (std::map<std::string, std::int64_t>{{"connect", 1}, {"http_status", 2}}));
  EXPECT_EQ(s.not_released, 4);
  EXPECT_EQ(s.ttft_ms.count, 1);
  EXPECT_EQ(s.dispatch_delay_ms.count, 4);  // every sent request, failed or not
  EXPECT_DOUBLE_EQ(s.requests_per_second, 0.5);
  EXPECT_DOUBLE_EQ(s.output_tokens_per_second, 1.5);
}

TEST(ServeSummary, GoodputCountsTheRequestsMeetingEveryBound) {
  Slo slo;
  slo.ttft_ms = 60;
  slo.tpot_ms = 15;
  // TTFT 50, TPOT 10: good. TTFT 70: too late. TTFT 50 but TPOT 20: too slow.
  const ServeSummary s = summarize(
      {done(0, 0, 0, 0, {50, 60}), done(1, 0, 0, 0, {70, 80}), done(2, 0, 0, 0, {50, 70})},
      1000 * kMs, 0, slo);
  EXPECT_DOUBLE_EQ(s.goodput_requests_per_second, 1);
  EXPECT_DOUBLE_EQ(s.requests_per_second, 3);
  Slo itl;
  itl.itl_ms = 15;  // every gap of a request within the bound
  EXPECT_DOUBLE_EQ(summarize({done(0, 0, 0, 0, {10, 20, 40}), done(1, 0, 0, 0, {10, 20, 30})},
                             1000 * kMs, 0, itl)
                       .goodput_requests_per_second,
                   1);
}

TEST(ServeSummary, ACompletedRequestWithoutTokensHasOnlyItsE2e) {
  RequestRecord empty = done(0, 0, 0, 0, {10});
  empty.chunks.clear();
  empty.first_token_ns = kNoTime;
  empty.output_tokens = 0;
  Slo slo;
  slo.ttft_ms = 100;
  const ServeSummary s = summarize({empty}, 1000 * kMs, 0, slo);
  EXPECT_EQ(s.completed, 1);
  EXPECT_EQ(s.ttft_ms.count, 0);
  EXPECT_DOUBLE_EQ(s.e2e_ms.max, 10);
  EXPECT_DOUBLE_EQ(s.goodput_requests_per_second, 0);  // no first token: not within a TTFT bound
}

TEST(ServeSummary, TheTokenSourceSaysUsageChunksOrMixed) {
  RequestRecord usage = done(0, 0, 0, 0, {10});
  usage.token_source = TokenSource::usage;
  EXPECT_EQ(summarize({usage}, kMs, 0, {}).token_source, "usage");
  EXPECT_EQ(summarize({done(0, 0, 0, 0, {10})}, kMs, 0, {}).token_source, "chunks");
  EXPECT_EQ(summarize({usage, done(1, 0, 0, 0, {10})}, kMs, 0, {}).token_source, "mixed");
  EXPECT_EQ(summarize({failed(ErrorKind::timeout, 0)}, kMs, 0, {}).token_source, "none");
}

TEST(ServeSummary, AClientThatFellBehindIsSaidWithTheNumbers) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < 10; ++i) records.push_back(done(i, i, i, i + 12.4, {i + 20.0}));
  const ServeSummary s = summarize(records, 100 * kMs, 0, {});
  EXPECT_FALSE(s.client_kept_up);
  EXPECT_EQ(s.keep_up_detail,
            "the client fell behind: lag p99 12.4 ms > 1 ms; these latencies include the "
            "client's delay");
  EXPECT_EQ(summarize({}, 0, 0, {}).keep_up_detail, "no request was sent");
}

TEST(ServeSummary, WarmupRequestsAndTimeAreLeftOut) {
  const Measured m = exclude_warmup(
      {done(0, 0, 0, 0, {10}), done(1, 500, 500, 500, {510}), done(2, 1000, 1000, 1000, {1010})},
      2000 * kMs, 500 * kMs);
  ASSERT_EQ(m.records.size(), 2u);
  EXPECT_EQ(m.records.front().index, 1);
  EXPECT_EQ(m.duration_ns, 1500 * kMs);
}

std::string slo_error(std::string_view text) {
  try {
    parse_slo(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "no error";
}

TEST(ServeSlo, ParsesMillisecondsAndSeconds) {
  const Slo slo = parse_slo("ttft=2s, tpot=100ms,e2e=1.5s,itl=50ms");
  EXPECT_EQ(*slo.ttft_ms, 2000);
  EXPECT_EQ(*slo.tpot_ms, 100);
  EXPECT_EQ(*slo.e2e_ms, 1500);
  EXPECT_EQ(*slo.itl_ms, 50);
  EXPECT_EQ(slo_text(slo), "ttft=2000ms,itl=50ms,tpot=100ms,e2e=1500ms");
  EXPECT_TRUE(parse_slo("").empty());
}

TEST(ServeSlo, EachMistakeHasItsMessage) {
  EXPECT_EQ(slo_error("tfft=2000ms"),
            "--slo: unknown objective 'tfft' (did you mean 'ttft'?); expected one of ttft, itl, "
            "tpot, e2e");
  EXPECT_EQ(slo_error("ttft2000ms"), "--slo: 'ttft2000ms': expected KEY=VALUE, e.g. ttft=2000ms");
  EXPECT_EQ(slo_error("ttft=2000"),
            "--slo: ttft=2000: expected a number above 0 with its unit, ms or s (e.g. 2000ms)");
  EXPECT_EQ(slo_error("ttft=-5ms"),
            "--slo: ttft=-5ms: expected a number above 0 with its unit, ms or s (e.g. 2000ms)");
  EXPECT_EQ(slo_error("ttft=1ms,ttft=2ms"), "--slo: ttft is given twice");
}

}  // namespace
}  // namespace plumb::serve
