#include "cli/serve_options.h"
#include "cli/store_option.h"

#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::cli {

void add_serve_endpoint_options(CLI::App& app, ServeEndpointOptions& o) {
  app.add_option("--url", o.url,
                 "The server: its streaming endpoint, or its base URL (the API's path is added)")
      ->required();
  app.add_option("--api", o.api,
                 "openai-completions (/v1/completions), openai-chat (/v1/chat/completions), tgi "
                 "(/generate_stream), triton (/v2/models/MODEL/generate_stream)")
      ->capture_default_str();
  app.add_option("--model", o.model, "The model's name (the OpenAI APIs require it; Triton's path)");
  app.add_option("-H,--header", o.headers, "An extra request header, 'Name: value' (repeatable)");
  app.add_flag("--http2", o.http2, "Speak HTTP/2 (prior knowledge on http://, ALPN on https://)");
  app.add_flag("-k,--insecure", o.insecure, "TLS without verifying the server's certificate");
  app.add_option("--cacert", o.cacert, "Verify the server's certificate against this CA (PEM)");
  app.add_option("--timeout", o.timeout_s, "Seconds from sending a request to its end")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--connect-timeout", o.connect_timeout_s, "Seconds to connect")
      ->capture_default_str()->check(CLI::PositiveNumber);
}

void add_serve_load_options(CLI::App& app, ServeLoadOptions& o) {
  app.add_option("-n,--requests", o.requests, "Requests to send (per run of a sweep)");
  app.add_option("--duration", o.duration_s, "Seconds to release requests for (per run)");
  app.add_option("-c,--concurrency", o.concurrency,
                 "Requests in flight: C (closed loop, or the cap of --rate), or C1,C2,... a sweep");
  app.add_option("-r,--rate", o.rate,
                 "Requests per second (open loop): R, inf (all at once), or A:B:STEP a sweep");
  app.add_option("--arrival", o.arrival, "poisson, constant or gamma (with --burstiness)")
      ->capture_default_str();
  app.add_option("--burstiness", o.burstiness, "gamma's shape: 1 is Poisson, below 1 burstier")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--input-tokens", o.input_tokens, "Prompt length in tokens (random prompts)")
      ->capture_default_str();
  app.add_option("--output-tokens", o.output_tokens, "Tokens to generate per request")
      ->capture_default_str();
  app.add_option("--length-spread", o.length_spread,
                 "Random lengths uniform in n*(1-S)..n*(1+S); 0 keeps them fixed")
      ->capture_default_str();
  app.add_option("--dataset", o.dataset,
                 "Prompts from a JSONL file ({\"prompt\": ...}), a ShareGPT JSON, or a Mooncake "
                 "trace (its arrivals too)");
  app.add_option("--dataset-format", o.dataset_format, "jsonl, sharegpt or trace (else guessed)");
  app.add_option("--seed", o.seed, "Seed of the arrivals and the prompts")->capture_default_str();
  app.add_option("--warmup", o.warmup_s,
                 "Seconds at the start whose requests (and time) are not counted");
  app.add_option("--repeat", o.repeat, "Run each load point N times (the spread plumb diff judges by)")
      ->capture_default_str()->check(CLI::PositiveNumber);
}

void add_serve_report_options(CLI::App& app, ServeReportOptions& o) {
  app.add_option("--json", o.json, "Write plumb.serve/1 JSON to FILE ('-' for stdout)");
  app.add_option("--slo", o.slo,
                 "Goodput's objectives: ttft=2000ms,tpot=100ms (itl, e2e too; ms or s): a "
                 "request counts only if it meets all");
  app.add_option("--metrics-url", o.metrics_url,
                 "The server's Prometheus /metrics, scraped before, during and after");
  app.add_option("--power", o.power,
                 "Power of the cards: nvidia-smi, npu-smi, or prometheus:URL SERIES");
  app.add_option("--cards", o.cards, "Cards serving the endpoint (per-card figures)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--price", o.price, "Price per card-hour (cost per million output tokens)");
  app.add_option("--hardware", o.hardware, "The plan catalog's card whose rent price to use");
  app.add_flag("--store", o.store, "Keep the result as a serving record in the store");
  app.add_option("--db", o.db, kStoreOptionHelp);
  app.add_option("--label", o.label, "A label for the stored record");
  app.add_flag("-q,--quiet", o.quiet, "No progress line");
}

namespace {

double number_or_throw(std::string_view option, std::string_view text, const NumberRange& range) {
  std::string problem;
  const auto value = parse_number(text, range, problem);
  if (!value) throw Error(fmt::format("{}: {}", option, problem));
  return *value;
}

// Each item of an option's list (its parts between commas, or colons) checked against one range,
// in order: the first that is not a number in range is the error.
std::vector<double> numbers_or_throw(std::string_view option, const std::vector<std::string>& items,
                                     const NumberRange& range) {
  std::vector<double> values;
  for (const std::string& item : items) values.push_back(number_or_throw(option, item, range));
  return values;
}

constexpr NumberRange kConcurrencyRange{1, kMaxConcurrency, false, true};
constexpr NumberRange kRateRange{0, 1e9, true, false};

}  // namespace

std::vector<int> parse_concurrency_list(const std::string& text) {
  std::vector<int> values;  // whole numbers up to kMaxConcurrency: exact as int
  for (double n : numbers_or_throw("--concurrency", split_list(text), kConcurrencyRange)) {
    values.push_back(static_cast<int>(n));
  }
  return values;
}

std::vector<double> parse_rate_list(const std::string& text) {
  if (text.empty()) return {};
  if (text == "inf") return {std::numeric_limits<double>::infinity()};
  const std::vector<std::string> parts = split_list(text, ':');
  if (parts.size() != 1 && parts.size() != 3) {
    throw Error(fmt::format("--rate: expected R, inf or A:B:STEP (e.g. 2:20:2), got '{}'",
                            shorten(text)));
  }
  const std::vector<double> numbers = numbers_or_throw("--rate", parts, kRateRange);
  if (numbers.size() == 1) return numbers;
  const double a = numbers[0], b = numbers[1], step = numbers[2];
  if (b < a) throw Error(fmt::format("--rate: 'A:B:STEP' needs A <= B, got '{}'", shorten(text)));
  const double steps = std::floor((b - a) / step + 1e-9) + 1;  // 1e-9: 0.1 steps land on B
  if (steps > kMaxSweepSteps) {
    throw Error(fmt::format("--rate: '{}' makes {:.0f} steps; at most {}", shorten(text), steps,
                            kMaxSweepSteps));
  }
  std::vector<double> rates;
  for (int i = 0; i < static_cast<int>(steps); ++i) rates.push_back(a + i * step);
  return rates;
}

std::vector<LoadPoint> load_points(const ServeLoadOptions& o) {
  const std::vector<int> cs = parse_concurrency_list(o.concurrency);
  const std::vector<double> rs = parse_rate_list(o.rate);
  if (cs.size() > 1 && rs.size() > 1) {
    throw Error("--concurrency and --rate: sweep one of them (give the other a single value)");
  }
  std::vector<LoadPoint> points;
  for (int c : cs.size() > 1 ? cs : std::vector<int>{cs.empty() ? 0 : cs[0]}) {
    for (double r : rs.empty() ? std::vector<double>{0} : rs) points.push_back({c, r});
  }
  return points;
}

serve::WorkloadSpec to_workload_spec(const ServeLoadOptions& o, const LoadPoint& point) {
  serve::WorkloadSpec s;
  s.requests = o.requests;
  s.duration_s = o.duration_s;
  s.concurrency = point.concurrency;
  s.rate = point.rate;
  s.arrival = o.arrival;
  s.burstiness = o.burstiness;
  s.input_tokens = o.input_tokens;
  s.output_tokens = o.output_tokens;
  s.length_spread = o.length_spread;
  s.dataset = o.dataset;
  s.dataset_format = o.dataset_format;
  s.seed = o.seed;
  return s;
}

serve::Endpoint to_endpoint(const ServeEndpointOptions& o) {
  serve::Endpoint e;
  e.url = o.url;
  e.api = o.api;
  e.model = o.model;
  e.headers = o.headers;
  e.http2 = o.http2;
  e.insecure = o.insecure;
  e.cacert = o.cacert;
  return e;
}

serve::RunControl to_run_control(const ServeEndpointOptions& o) {
  serve::RunControl c;
  c.request_timeout_s = o.timeout_s;
  c.connect_timeout_s = o.connect_timeout_s;
  return c;
}

}  // namespace plumb::cli
