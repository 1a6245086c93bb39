// plumb env: versions and settings that change results.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace plumb::cli {

struct EnvOptions {
  std::string json;          // file, or "-" for standard output
  double python_timeout = 10.0;
};

void setup_env(CLI::App& app, EnvOptions& options);
int run_env(const EnvOptions& options);

}  // namespace plumb::cli
