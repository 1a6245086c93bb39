// plumb mem: allocator traces (PyTorch and torch_npu snapshots, their JSON, plumb.mem-events/1).
// `plumb mem analyze FILE`: timeline, peak by category, fragmentation, creep and the cause of
// each OOM.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace plumb::cli {

enum class MemMode { kNone, kAnalyze };

struct MemOptions {
  MemMode mode = MemMode::kNone;
  std::string file;
  int device = 0;
  std::optional<std::string> step_regex;
  std::string category_rules;
  std::string json;  // plumb.mem/1 to this file ("-": standard output)
};

void setup_mem(CLI::App& app, MemOptions& options);
int run_mem(const MemOptions& options);

}  // namespace plumb::cli
