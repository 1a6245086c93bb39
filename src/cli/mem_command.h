// plumb mem: allocator traces (PyTorch and torch_npu snapshots, their JSON, plumb.mem-events/1)
// and periodic torch.cuda.memory_stats() dumps. `plumb mem analyze FILE`: timeline, peak (by
// category for a trace), fragmentation, creep, and the cause of each OOM (a trace) or the count of
// retries and OOMs (dumps). `plumb mem creep FILE`: the memory baseline of plumb.train-events/1
// lines: each rank's settled level, creep per step with its 95% interval, and the checkpoint check.
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

enum class MemMode { kNone, kAnalyze, kReplay, kReport, kCreep };

struct MemOptions {
  MemMode mode = MemMode::kNone;
  std::string file;
  int device = 0;
  std::optional<std::string> step_regex;
  std::string category_rules;
  std::string json;  // plumb.mem/1 to this file ("-": standard output)
  std::string timeline;  // analyze: --timeline CSV
  std::string policies = "all";  // replay, report: --policies
  std::string capacity;          // replay, report: --capacity (bytes, with K/M/G/T)
  unsigned threads = 2;          // replay, report: --threads (policies replayed at once)
  std::string output = "plumb-mem-report.html";  // report: -o
  bool by_event = false;                        // report: x = event index
  std::optional<size_t> warmup;                 // creep: --warmup N (else detected)
};

void setup_mem(CLI::App& app, MemOptions& options);
int run_mem(const MemOptions& options);

}  // namespace plumb::cli
