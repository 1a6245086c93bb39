// plumb diff A B: compares two baselines (stored ids, "latest" or JSON files); exit 1 on a
// regression so that it can gate a CI job or an acceptance run, 3 (baseline::kTooNoisyExitCode)
// when the runs are too noisy to judge a change, 2 when there is nothing to compare.
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct DiffOptions {
  std::string a;
  std::string b;
  std::string db;
  double threshold_percent = 10;
  bool all = false;
  bool strict = false;
  std::string json;  // plumb.diff/1 to this file ("-": standard output)
};

void setup_diff(CLI::App& app, DiffOptions& options);
int run_diff(const DiffOptions& options);

}  // namespace plumb::cli
