#include "cli/mem_command.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>

#include "common/error.h"
#include "mem/analysis.h"
#include "mem/snapshot_reader.h"
#include "report/mem_reporter.h"

namespace plumb::cli {
namespace {

void write_json(const nlohmann::json& j, const std::string& path) {
  const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream file(path, std::ios::trunc);
  if (!file) throw Error(fmt::format("--json {}: cannot write: {}", path, std::strerror(errno)));
  file << text;
}

mem::AnalyzeOptions analyze_options(const MemOptions& o) {
  mem::AnalyzeOptions a;
  if (o.step_regex) {
    try {
      std::regex check(*o.step_regex);
    } catch (const std::regex_error& e) {
      throw Error(fmt::format("--step-regex '{}': not a valid regex: {}", *o.step_regex, e.what()));
    }
    a.step_regex = o.step_regex;
  }
  if (!o.category_rules.empty()) a.rules = mem::read_category_rules(o.category_rules);
  return a;
}

int run_analyze(const MemOptions& o) {
  const mem::AnalyzeOptions options = analyze_options(o);
  if (!o.json.empty() && o.json != "-") {
    std::ofstream probe(o.json, std::ios::app);
    if (!probe) throw Error(fmt::format("--json {}: cannot write: {}", o.json, std::strerror(errno)));
  }
  const mem::Trace trace = mem::read_trace(o.file, o.device);
  const mem::Analysis a = mem::analyze(trace, options);
  if (!o.json.empty()) write_json(report::mem_analysis_json(a), o.json);
  if (o.json != "-") report::print_mem_analysis(a, std::cout);
  return 0;
}

}  // namespace

void setup_mem(CLI::App& app, MemOptions& o) {
  app.require_subcommand(1);
  CLI::App* analyze = app.add_subcommand(
      "analyze", "Timeline, peak by category, fragmentation, creep (leaks) and each OOM's cause");
  analyze->add_option("FILE", o.file,
                      "A snapshot (torch.cuda.memory._dump_snapshot pickle, or its JSON) or "
                      "plumb.mem-events/1 lines")
      ->required();
  analyze->add_option("--device", o.device, "Which device's trace")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  analyze->add_option("--step-regex", o.step_regex,
                      "A step begins where a frame's function name starts matching this "
                      "(default: the trace's marks, ProfilerStep#N, else the repeating pattern)");
  analyze->add_option("--category-rules", o.category_rules,
                      "'category = regex' lines replacing the default frame rules");
  analyze->add_option("--json", o.json, "Write plumb.mem/1 here (- for standard output)");
  analyze->callback([&o] { o.mode = MemMode::kAnalyze; });
}

int run_mem(const MemOptions& o) {
  switch (o.mode) {
    case MemMode::kAnalyze: return run_analyze(o);
    case MemMode::kNone: break;
  }
  return static_cast<int>(ExitCode::kBadInput);
}

}  // namespace plumb::cli
