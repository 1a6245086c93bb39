// The options plumb serve bench and plumb serve peak share: where requests go, what load, what
// is reported (docs/serve.md, "Options").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "serve/client.h"
#include "serve/workload.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct ServeEndpointOptions {
  std::string url;
  std::string api = "openai-completions";
  std::string model;
  std::vector<std::string> headers;
  bool http2 = false;
  bool insecure = false;
  std::string cacert;  // --cacert FILE
  double timeout_s = 600;
  double connect_timeout_s = 10;
};

struct ServeLoadOptions {
  std::int64_t requests = 0;       // --requests N (0: --duration, else the default count)
  double duration_s = 0;           // --duration S
  std::string concurrency;         // --concurrency C or C1,C2,... (a sweep)
  std::string rate;                // --rate R or A:B:STEP (a sweep); "inf": all at once
  std::string arrival = "poisson"; // poisson, constant, gamma
  double burstiness = 1.0;         // gamma's shape (1 = Poisson; < 1 burstier)
  int input_tokens = 512;
  int output_tokens = 128;
  double length_spread = 0;        // random lengths: uniform in [n(1-s), n(1+s)]; 0 = fixed
  std::string dataset;             // --dataset FILE (JSONL of prompts, ShareGPT JSON, a trace)
  std::string dataset_format;      // jsonl, sharegpt, trace; empty: from the file
  std::uint64_t seed = 0;
  double warmup_s = 0;             // requests released before this are not counted
  int repeat = 1;                  // --repeat N: each load point N times (plumb diff's noise)
};

struct ServeReportOptions {
  std::string json;                // --json FILE (plumb.serve/1)
  std::string slo;                 // --slo ttft=2000ms,tpot=100ms
  std::string metrics_url;         // --metrics-url: the server's Prometheus /metrics
  std::string power;               // --power nvidia-smi|npu-smi|prometheus:URL SERIES
  int cards = 1;                   // --cards N: per-card figures
  double price = 0;                // --price per card-hour
  std::string hardware;            // --hardware NAME: the plan catalog's price
  bool store = false;              // --store: keep a serving record
  std::string db;
  std::string label;
  bool quiet = false;
};

void add_serve_endpoint_options(CLI::App& app, ServeEndpointOptions& options);
void add_serve_load_options(CLI::App& app, ServeLoadOptions& options);
void add_serve_report_options(CLI::App& app, ServeReportOptions& options);

// One load point of a run or a sweep: a closed loop at `concurrency` (rate 0), an open loop at
// `rate` (capped by `concurrency` when it is not 0), or a trace (both 0 but a cap).
struct LoadPoint {
  int concurrency = 0;
  double rate = 0;  // requests/s; infinity for "inf"
};

// "4" or "1,2,4,8": whole numbers from 1 to kMaxConcurrency; "" is {}. Throws plumb::Error
// (exit 2): "--concurrency: must be a whole number from 1 to 1000000, got 'x'".
std::vector<int> parse_concurrency_list(const std::string& text);
// "10", "inf", or "A:B:STEP" (A, A+STEP, ... up to B, at most kMaxSweepSteps); "" is {}.
// Throws: "--rate: 'A:B:STEP' needs A <= B, got '5:1:1'" (a STEP of 0 is out of its range).
std::vector<double> parse_rate_list(const std::string& text);
// The load points in the order they run: a concurrency sweep, a rate sweep (each capped by a
// single --concurrency), or one point. Throws when both sweep.
std::vector<LoadPoint> load_points(const ServeLoadOptions& options);
// The workload of one load point (repetition `repeat` uses the same seed: the same requests).
serve::WorkloadSpec to_workload_spec(const ServeLoadOptions& options, const LoadPoint& point);

inline constexpr int kMaxConcurrency = 1'000'000;
inline constexpr int kMaxSweepSteps = 1000;

serve::Endpoint to_endpoint(const ServeEndpointOptions& options);
serve::RunControl to_run_control(const ServeEndpointOptions& options);

}  // namespace plumb::cli
