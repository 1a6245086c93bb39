// bench/plan_compare: how fast `plumb plan compare` answers a buyer's question.
//
// Figure (issue 15): a 405B dense model (Llama 3 405B) and a 671B MoE (DeepSeek-V3) at 16T tokens,
// each compared over six chips, in under 5 s per model. Each chip is searched (plan search, top 1)
// at three device counts, as a budget's three tiers would be: 18 searches per model. Timed twice:
// plan::compare in this process (median of --runs), and the real `plumb plan compare` command
// once (its start and the catalog's YAML included).
//
//   build/bench/plan_compare [--runs N] [--smoke]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/stats.h"
#include "plan/catalog.h"
#include "plan/compare.h"

namespace {

using namespace plumb::plan;

constexpr double kTokens = 16e12;
constexpr double kTargetSeconds = 5;
const char* const kChips[] = {"h100-sxm", "h200", "b200", "mi300x", "mi355x", "ascend-910c"};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<CompareChip> chips() {
  std::vector<CompareChip> out;
  for (const char* name : kChips) {
    const std::string path = preset_path("hardware", name);
    out.push_back({name, path, load_hardware(path)});
  }
  return out;
}

std::string counts_arg(const std::vector<int64_t>& counts) {
  std::string s;
  for (int64_t n : counts) s += (s.empty() ? "" : ",") + std::to_string(n);
  return s;
}

// The whole command, as a user runs it; its table goes to /dev/null.
double cli_seconds(const std::string& model, const std::vector<int64_t>& counts) {
  std::string hardware;
  for (const char* name : kChips) hardware += (hardware.empty() ? "" : ",") + std::string(name);
  const std::string command =
      fmt::format("{} plan compare --model {} --hardware {} --devices {} --tokens {:g} >/dev/null",
                  PLUMB_BINARY, model, hardware, counts_arg(counts), kTokens);
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  const double s = seconds_since(start);
  if (status != 0) fmt::print("  `{}` exited with {}\n", command, status);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  bool smoke = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--smoke") == 0) smoke = true;
  }
  if (smoke) runs = 1;
  const std::vector<int64_t> counts =
      smoke ? std::vector<int64_t>{1024} : std::vector<int64_t>{8192, 16384, 32768};
  const std::vector<CompareChip> all = chips();
  for (const char* name : {"llama3-405b", "deepseek-v3-671b"}) {
    const ModelSpec m = load_model(preset_path("models", name));
    CompareSpec spec;
    spec.tokens = kTokens;
    spec.devices = counts;
    std::vector<double> seconds;
    size_t found = 0;
    for (int r = 0; r < runs; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const Comparison c = compare(m, all, spec);
      seconds.push_back(seconds_since(start));
      found = 0;
      for (const ChipComparison& chip : c.chips) {
        for (const CompareRow& row : chip.rows) found += row.best ? 1 : 0;
      }
    }
    const double median = plumb::percentile(seconds, 50);
    const double cli = cli_seconds(name, counts);
    fmt::print("compare {} at {:g} tokens: {} chips × {} counts ({} searches, {} with a layout "
               "that fits) in {:.3f} s median of {} (target < {:g} s; ratio {:.2f}) · the plumb plan "
               "compare command {:.3f} s\n",
               name, kTokens, all.size(), counts.size(), all.size() * counts.size(), found, median,
               runs, kTargetSeconds, median / kTargetSeconds, cli);
  }
  return 0;
}
