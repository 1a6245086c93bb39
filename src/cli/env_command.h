// plumb env: versions and settings that change results.
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct EnvOptions {
  std::string json;          // file, or "-" for standard output
  double python_timeout = 10.0;
};

void setup_env(CLI::App& app, EnvOptions& options);
int run_env(const EnvOptions& options);

}  // namespace plumb::cli
