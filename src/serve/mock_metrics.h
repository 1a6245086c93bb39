// The reference server's own /metrics, under vLLM's names (vllm/v1/metrics/loggers.py), so that
// serve/server_metrics' scrape is tested against the series a real vLLM exposes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace plumb::serve {

struct MockHistogram {
  std::vector<double> bounds;         // upper bounds, ascending; +Inf is implied
  std::vector<std::uint64_t> counts;  // per bound (not cumulative), then +Inf
  double sum = 0;
  std::uint64_t count = 0;
  explicit MockHistogram(std::vector<double> upper_bounds);
  void observe(double value);
};

struct MockMetrics {
  int running = 0;  // vllm:num_requests_running
  int waiting = 0;  // vllm:num_requests_waiting
  std::uint64_t prompt_tokens = 0;      // vllm:prompt_tokens_total
  std::uint64_t generation_tokens = 0;  // vllm:generation_tokens_total
  std::uint64_t finished_length = 0;    // vllm:request_success_total{finished_reason="length"}
  MockHistogram ttft;  // vllm:time_to_first_token_seconds
  MockHistogram itl;   // vllm:inter_token_latency_seconds
  MockHistogram e2e;   // vllm:e2e_request_latency_seconds
  MockMetrics();
  // The text format 0.0.4 as prometheus_client writes it.
  std::string render(const std::string& model) const;
};

}  // namespace plumb::serve
