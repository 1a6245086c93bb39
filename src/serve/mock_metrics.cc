#include "serve/mock_metrics.h"

#include <charconv>

namespace plumb::serve {
namespace {

// vLLM v1's buckets (vllm/v1/metrics/loggers.py).
const std::vector<double> kTtftBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                          0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0,
                                          20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kItlBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                         0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
const std::vector<double> kE2eBuckets = {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,
                                         5.0,  10.0, 15.0, 20.0, 30.0,  40.0,  50.0,
                                         60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

// A float as Python's repr writes it (prometheus_client's floatToGoString): "1.0", "0.005".
std::string py_float(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

struct Family {
  const char* name;
  const char* type;
  const char* help;
};

void header(std::string& out, const Family& family) {
  out += std::string("# HELP ") + family.name + " " + family.help + "\n";
  out += std::string("# TYPE ") + family.name + " " + family.type + "\n";
}

void sample(std::string& out, const std::string& name, const std::string& labels, double value) {
  out += name + "{" + labels + "} " + py_float(value) + "\n";
}

void histogram(std::string& out, const Family& family, const std::string& labels,
               const MockHistogram& h) {
  header(out, family);
  std::string name = family.name;
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= h.bounds.size(); ++i) {
    cumulative += h.counts[i];
    std::string le = i < h.bounds.size() ? py_float(h.bounds[i]) : "+Inf";
    sample(out, name + "_bucket", labels + ",le=\"" + le + "\"", static_cast<double>(cumulative));
  }
  sample(out, name + "_count", labels, static_cast<double>(h.count));
  sample(out, name + "_sum", labels, h.sum);
}

}  // namespace

MockHistogram::MockHistogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void MockHistogram::observe(double value) {
  std::size_t i = 0;
  while (i < bounds.size() && value > bounds[i]) ++i;
  ++counts[i];
  sum += value;
  ++count;
}

MockMetrics::MockMetrics() : ttft(kTtftBuckets), itl(kItlBuckets), e2e(kE2eBuckets) {}

std::string MockMetrics::render(const std::string& model) const {
  std::string escaped;  // a label value's escapes: backslash, quote, newline
  for (char c : model) escaped += c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" : std::string(1, c);
  std::string labels = "engine=\"0\",model_name=\"" + escaped + "\"";
  std::string out;
  header(out, {"vllm:num_requests_running", "gauge",
               "Number of requests in model execution batches."});
  sample(out, "vllm:num_requests_running", labels, running);
  header(out, {"vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed."});
  sample(out, "vllm:num_requests_waiting", labels, waiting);
  header(out, {"vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed."});
  sample(out, "vllm:prompt_tokens_total", labels, static_cast<double>(prompt_tokens));
  header(out, {"vllm:generation_tokens_total", "counter", "Number of generation tokens processed."});
  sample(out, "vllm:generation_tokens_total", labels, static_cast<double>(generation_tokens));
  header(out, {"vllm:request_success_total", "counter", "Count of successfully processed requests."});
  sample(out, "vllm:request_success_total", labels + ",finished_reason=\"length\"",
         static_cast<double>(finished_length));
  histogram(out, {"vllm:time_to_first_token_seconds", "histogram",
                  "Histogram of time to first token in seconds."}, labels, ttft);
  histogram(out, {"vllm:inter_token_latency_seconds", "histogram",
                  "Histogram of inter-token latency in seconds."}, labels, itl);
  histogram(out, {"vllm:e2e_request_latency_seconds", "histogram",
                  "Histogram of e2e request latency in seconds."}, labels, e2e);
  return out;
}

}  // namespace plumb::serve
