// plumb serve mock: the reference server (serve/mock_server.h) in the foreground until SIGINT or
// SIGTERM, for trying plumb serve bench/peak against a server whose timings are known
// (docs/serve.md).
#include "cli/serve_subcommands.h"

#include "cli/stop_signal.h"
#include "common/error.h"
#include "serve/mock_server.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace plumb::cli {
namespace {

constexpr auto kSignalPoll = std::chrono::milliseconds(100);

struct MockOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // vLLM's default port
  int slots = 0;
  std::string model = "mock";
  std::string log;
  std::string plan;                   // --plan key=value,... (the X-Plumb-Mock syntax)
  // The named timing and fault options in the order given: (option, key, value).
  std::vector<std::array<std::string, 3>> timings;
  std::vector<std::string> errors;    // --error STATUS:FIRST-LAST ...
};

serve::MockConfig to_config(const MockOptions& options) {
  serve::MockConfig config;
  config.host = options.host;
  config.port = options.port;
  config.slots = options.slots;
  config.model = options.model;
  config.log_path = options.log;
  for (const auto& [option, key, value] : options.timings)
    serve::apply_mock_option(config.plan, key, value, option);
  serve::apply_mock_overrides(config.plan, options.plan, "--plan");
  for (const auto& rule : options.errors)
    config.errors.push_back(serve::parse_mock_error_rule(rule, "--error"));
  return config;
}

int run_serve_mock(const MockOptions& options) {
  serve::MockServer server(to_config(options));
  const std::atomic<bool>& stop = stop_on_signals();
  server.start();
  fmt::print(stderr,
             "plumb serve mock: serving {} (POST /v1/completions, /v1/chat/completions, "
             "/generate_stream, /v2/models/M/generate_stream; GET /metrics)\n",
             server.base_url());
  std::fflush(stderr);
  while (!stop.load()) std::this_thread::sleep_for(kSignalPoll);
  server.stop();
  return 0;
}

// A named timing option is read by the same parser as the header's key of that name.
void add_timing(CLI::App* sub, std::vector<std::array<std::string, 3>>& timings,
                const std::string& flag, const std::string& key, const std::string& help) {
  sub->add_option_function<std::string>(
      flag, [&timings, flag, key](const std::string& value) { timings.push_back({flag, key, value}); },
      help);
}

}  // namespace

void setup_serve_mock(CLI::App& serve, std::function<int()>& selected) {
  auto options = std::make_shared<MockOptions>();
  CLI::App* sub = serve.add_subcommand(
      "mock", "a reference server with programmed token timings, capacity and faults");
  sub->add_option("--host", options->host, "address to listen on (default 127.0.0.1)");
  sub->add_option("--port", options->port, "port (default 8000; 0 = any free port)");
  sub->add_option("--slots", options->slots,
                  "generations at once; the rest wait FIFO and the wait counts in TTFT (0 = no "
                  "limit)");
  sub->add_option("--model", options->model, "the model name answers and /metrics carry");
  add_timing(sub, options->timings, "--ttft", "ttft", "time to first token after a slot, e.g. 50ms (default 0)");
  add_timing(sub, options->timings, "--itl", "itl", "gap between tokens with one active, e.g. 5ms (default 0)");
  add_timing(sub, options->timings, "--itl-per-active", "itl_per_active",
             "added to the gap per other active generation, e.g. 1ms (default 0)");
  add_timing(sub, options->timings, "--tokens", "tokens",
             "output tokens when a request names no max_tokens (default 16)");
  add_timing(sub, options->timings, "--stall", "stall", "K:DURATION: pause after token K");
  add_timing(sub, options->timings, "--drop", "drop", "close the connection after K tokens");
  add_timing(sub, options->timings, "--malformed", "malformed",
             "send an event that is not JSON after K tokens");
  add_timing(sub, options->timings, "--hang", "hang", "send nothing more after K tokens");
  add_timing(sub, options->timings, "--framing", "framing",
             "chunked (default) or close: end each stream by closing the connection");
  sub->add_option("--plan", options->plan,
                  "key=value,... as in the X-Plumb-Mock request header (ttft, itl, "
                  "itl_per_active, tokens, stall, status, drop, malformed, hang, framing)");
  sub->add_option("--error", options->errors,
                  "STATUS:FIRST-LAST, STATUS:INDEX or STATUS:every=N: answer those requests (by "
                  "arrival, from 0) with that HTTP status")
      ->allow_extra_args(false);
  sub->add_option("--log", options->log, "write each finished request's truth as a JSONL line");
  sub->callback([options, &selected] { selected = [options] { return run_serve_mock(*options); }; });
}

}  // namespace plumb::cli
