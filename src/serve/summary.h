// One run's records folded into what plumb serve reports: the latency distributions, the
// throughputs, goodput under SLOs, errors by kind and whether the client kept up
// (docs/serve.md, "Metrics": every definition, and how each matches vLLM, GenAI-Perf and MLPerf).
#pragma once

#include "serve/request.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace plumb::serve {

// A latency distribution in milliseconds; count 0 when nothing was measured.
struct Distribution {
  std::int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// --slo ttft=2000ms,tpot=100ms: a request is good only if it meets every bound given.
struct Slo {
  std::optional<double> ttft_ms, itl_ms, tpot_ms, e2e_ms;
  bool empty() const { return !ttft_ms && !itl_ms && !tpot_ms && !e2e_ms; }
};

struct ServeSummary {
  std::int64_t completed = 0;  // requests that ended without error
  std::int64_t errors = 0;
  std::map<std::string, std::int64_t> errors_by_kind;  // error_kind_name -> count, nonzero only
  std::int64_t not_released = 0;
  double duration_s = 0;
  Distribution ttft_ms, itl_ms, tpot_ms, e2e_ms, dispatch_delay_ms;
  Distribution client_lag_ms;  // ready -> sent: the client's own delay (the keep-up verdict)
  double requests_per_second = 0;
  double output_tokens_per_second = 0;
  double total_tokens_per_second = 0;
  double goodput_requests_per_second = 0;  // requests meeting every SLO, per second
  std::int64_t input_tokens = 0, output_tokens = 0;
  std::string token_source;   // "usage", "chunks" or "mixed"
  bool client_kept_up = true;  // client_lag p99 under the bound (docs/serve.md)
  std::string keep_up_detail;  // one line saying why, with the numbers
};

ServeSummary summarize(const std::vector<RequestRecord>& records, Nanos duration_ns,
                       std::int64_t not_released, const Slo& slo);

}  // namespace plumb::serve
