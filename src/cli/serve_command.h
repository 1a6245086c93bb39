// plumb serve: the inference serving baseline (docs/serve.md). bench: a load generator against an
// OpenAI-compatible, TGI or Triton endpoint (one run, or a sweep of concurrencies or rates); peak:
// the highest rate or concurrency at which the SLO holds at p99; mock: a server whose token timings
// are programmed (the tests' reference, and a way to try plumb serve without a model).
#pragma once

#include <functional>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct ServeOptions {
  std::function<int()> selected;
};

void setup_serve(CLI::App& app, ServeOptions& options);
int run_serve(const ServeOptions& options);

}  // namespace plumb::cli
