// The options plumb serve bench and plumb serve peak share: where requests go, what load, what
// is reported (docs/serve.md, "Options").
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "serve/client.h"

namespace plumb::cli {

struct ServeEndpointOptions {
  std::string url;
  std::string api = "openai-completions";
  std::string model;
  std::vector<std::string> headers;
  bool http2 = false;
  bool insecure = false;
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

serve::Endpoint to_endpoint(const ServeEndpointOptions& options);
serve::RunControl to_run_control(const ServeEndpointOptions& options);

}  // namespace plumb::cli
