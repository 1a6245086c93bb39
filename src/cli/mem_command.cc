#include "cli/mem_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "common/error.h"
#include "common/huge_pages.h"
#include "common/output_file.h"
#include "common/regex.h"
#include "common/units.h"
#include "mem/analysis.h"
#include "mem/input.h"
#include "mem/memory_baseline.h"
#include "mem/replay.h"
#include "mem/snapshot_reader.h"
#include "mem/stats_reader.h"
#include "report/mem_html.h"
#include "report/memory_baseline_reporter.h"
#include "report/mem_replay_reporter.h"
#include "report/mem_reporter.h"

namespace plumb::cli {
namespace {

// `build` makes the document only when --json asked for it (for a snapshot of 1.6 M events it was
// 5% of the run, thrown away).
template <class Build>
void write_json(Build&& build, std::optional<OutputFile>& file) {
  if (!file) return;
  file->stream() << build().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  file->commit();
}

// The outputs of a mem command, each created before the work (so a bad path fails at once) and
// refused when it is the trace it reads or another output.
struct MemOutputs {
  std::optional<OutputFile> json;
  std::optional<OutputFile> timeline;
  std::optional<OutputFile> page;
};

std::unique_ptr<MemOutputs> open_outputs(const MemOptions& o) {
  const std::vector<NamedPath> outputs = {{"--json", o.json}, {"--timeline", o.timeline},
                                          {"-o", o.mode == MemMode::kReport ? o.output : ""}};
  const std::vector<NamedPath> inputs = {{"the trace FILE", o.file},
                                         {"--category-rules", o.category_rules}};
  refuse_overlapping_paths(outputs, inputs);
  auto out = std::make_unique<MemOutputs>();
  if (!o.json.empty()) out->json.emplace("--json", o.json);
  if (!o.timeline.empty()) out->timeline.emplace("--timeline", o.timeline);
  if (o.mode == MemMode::kReport) out->page.emplace("-o", o.output);
  return out;
}

mem::AnalyzeOptions analyze_options(const MemOptions& o) {
  mem::AnalyzeOptions a;
  if (o.step_regex) {
    Regex(*o.step_regex, "--step-regex");  // refused at start, with RE2's reason
    a.step_regex = o.step_regex;
  }
  if (!o.category_rules.empty()) a.rules = mem::read_category_rules(o.category_rules);
  return a;
}

// memory_stats() dumps: one dump is one step, and they carry no frames to match.
int run_analyze_stats(const MemOptions& o, const mem::InputBytes& input) {
  if (o.step_regex) {
    throw Error(fmt::format("--step-regex: {} holds memory_stats() dumps (each dump is one step, no "
                            "frames); it applies to allocator traces", o.file));
  }
  if (!o.timeline.empty()) {
    throw Error(fmt::format("--timeline: {} holds memory_stats() dumps, one per step: --json has "
                            "every one", o.file));
  }
  if (!o.category_rules.empty()) {
    throw Error(fmt::format("--category-rules: {} holds memory_stats() dumps (no frames to "
                            "categorise); it applies to allocator traces", o.file));
  }
  auto out = open_outputs(o);
  const mem::StatsAnalysis a = mem::analyze_stats(mem::parse_memory_stats(input));
  write_json([&] { return report::mem_stats_json(a); }, out->json);
  if (o.json != "-") report::print_mem_stats(a, std::cout);
  return 0;
}

// FILE is read once (a FIFO or a pipe can be read only once): the format is told from these bytes.
int run_analyze(const MemOptions& o) {
  const mem::InputBytes input = mem::load_input(o.file);
  if (mem::is_memory_stats(input)) return run_analyze_stats(o, input);
  const mem::AnalyzeOptions options = analyze_options(o);
  auto out = open_outputs(o);
  const mem::Trace trace = mem::read_trace(input, o.device);
  const mem::Analysis a = mem::analyze(trace, options);
  if (out->timeline) {
    report::write_mem_timeline_csv(trace, a, out->timeline->stream());
    out->timeline->commit();
  }
  write_json([&] { return report::mem_analysis_json(a); }, out->json);
  if (o.json != "-") report::print_mem_analysis(a, std::cout);
  return 0;
}

uint64_t capacity_option(const MemOptions& o) {
  if (o.capacity.empty()) return 0;
  const uint64_t bytes = parse_bytes(o.capacity, "--capacity");
  if (bytes == 0) throw Error("--capacity 0: give the bytes the allocator may reserve, e.g. 94G");
  return bytes;
}

void refuse_stats(const MemOptions& o, const mem::InputBytes& input, const char* command) {
  if (mem::is_memory_stats(input)) {
    throw Error(fmt::format("{}: memory_stats() dumps hold totals, not the allocation sequence that "
                            "plumb mem {} needs: give an allocator trace (a snapshot or "
                            "plumb.mem-events/1 lines)", o.file, command));
  }
}

// The trace's start (mem::TraceStart): an analysis has it in its timeline; plumb mem replay finds
// it on a thread of its own while the policies replay (the replays wait for it only for the
// capacity at the trace's oom).
using StartSource = std::function<const mem::TraceStart&()>;

bool has_oom(const mem::Trace& trace) {
  return std::any_of(trace.events.begin(), trace.events.end(),
                     [](const mem::Event& e) { return e.action == mem::Action::kOom; });
}

// The recorded policy first, then the ones asked for, each against the same capacity: --capacity,
// else the trace's own at its oom event, else none; --threads of them at once.
// `all_series`: every policy's reserved bytes per event are kept (the report's chart), else only
// the recorded one's (the check).
report::ReplayReport replay_report(const mem::Trace& trace, const StartSource& start,
                                   const std::vector<mem::AllocatorPolicy>& asked,
                                   uint64_t capacity, unsigned threads, bool all_series) {
  report::ReplayReport r;
  r.source = trace.source;
  r.events = trace.events.size();
  r.capacity = capacity;
  r.capacity_from = capacity > 0 ? "--capacity" : "none";
  r.has_recorded_oom = has_oom(trace);
  if (capacity == 0 && r.has_recorded_oom) {
    r.capacity = mem::capacity_from_trace(trace, start());
    if (r.capacity > 0) r.capacity_from = "from the trace's oom: reserved + device_free";
  }
  mem::ReplayOptions options;
  options.capacity = r.capacity;
  options.threads = threads;
  if (!all_series) options.series = 1;
  std::vector<mem::AllocatorPolicy> policies{mem::recorded_policy(trace)};
  policies.insert(policies.end(), asked.begin(), asked.end());
  r.policies = mem::replay_all(trace, policies, options);
  r.check = mem::check_against_recorded(trace, start(), r.policies.front());
  return r;
}

int run_replay(const MemOptions& o) {
  const mem::InputBytes input = mem::load_input(o.file);
  refuse_stats(o, input, "replay");
  const auto policies = mem::policies_from_list(o.policies);
  const uint64_t capacity = capacity_option(o);
  auto out = open_outputs(o);
  const mem::Trace trace = mem::read_trace(input, o.device);
  std::shared_future<mem::TraceStart> start =
      std::async(o.threads > 1 ? std::launch::async : std::launch::deferred,
                 [&] { return mem::trace_start(trace); });
  const report::ReplayReport r = replay_report(
      trace, [&]() -> const mem::TraceStart& { return start.get(); }, policies, capacity, o.threads,
      false);
  write_json([&] { return report::mem_replay_json(r); }, out->json);
  if (o.json != "-") report::print_mem_replay(r, std::cout);
  const bool gate = capacity > 0 && r.policies.front().ran_out;
  return static_cast<int>(gate ? ExitCode::kCheckFailed : ExitCode::kOk);
}


// The analysis and the policy comparison on one page; every input is checked before the work.
int run_mem_report(const MemOptions& o) {
  const mem::InputBytes input = mem::load_input(o.file);
  refuse_stats(o, input, "report");
  const mem::AnalyzeOptions options = analyze_options(o);
  const auto policies = mem::policies_from_list(o.policies);
  const uint64_t capacity = capacity_option(o);
  auto out = open_outputs(o);
  const mem::Trace trace = mem::read_trace(input, o.device);
  const mem::Analysis a = mem::analyze(trace, options);
  const mem::TraceStart start{a.timeline.initial, a.timeline.dropped_frees};
  const report::ReplayReport replays = replay_report(
      trace, [&]() -> const mem::TraceStart& { return start; }, policies, capacity, o.threads, true);
  report::MemHtmlOptions html;
  html.rules = options.rules;
  html.by_event_index = o.by_event;
  report::write_mem_html(trace, a, replays.policies, html, out->page->stream());
  out->page->commit();
  if (o.output != "-") fmt::print(std::cout, "report: {}\n", o.output);
  return 0;
}

// The memory baseline of train-events lines: exit 1 when a rank leaks or the checkpoint check
// fails (a failed check, as plumb diff's regression); "too few steps" and "missing" are reported
// and do not fail it (docs/mem.md, "Creep from train-events").
int run_creep(const MemOptions& o) {
  const std::vector<NamedPath> outputs = {{"--json", o.json}};
  const std::vector<NamedPath> inputs = {{"the events FILE", o.file}};
  refuse_overlapping_paths(outputs, inputs);
  std::optional<OutputFile> json_file;
  if (!o.json.empty()) json_file.emplace("--json", o.json);
  const mem::MemoryBaseline b = mem::memory_baseline(mem::read_memory_series(o.file), o.warmup);
  write_json([&] {
    nlohmann::json doc = {{"schema", report::kMemCreepSchema}};
    doc.update(report::memory_baseline_json(b));
    return doc;
  }, json_file);
  if (o.json != "-") report::print_memory_baseline(b, std::cout);
  const bool failed = b.leaks() || b.checkpoint.verdict == "fail";
  return static_cast<int>(failed ? ExitCode::kCheckFailed : ExitCode::kOk);
}

void setup_creep(CLI::App& app, MemOptions& o) {
  CLI::App* creep = app.add_subcommand(
      "creep", "The memory baseline of plumb.train-events/1 lines: each rank's settled level, its "
               "creep per step (flat or a leak) and the checkpoint check; exit 1 on a leak or a "
               "failed check");
  creep->add_option("FILE", o.file, "plumb.train-events/1 lines (one rank or several, interleaved)")
      ->required();
  creep->add_option("--warmup", o.warmup,
                    "Leave out the first N lines of every rank (default: detected per rank, MSER)")
      ->check(CLI::NonNegativeNumber);
  creep->add_option("--json", o.json, "Write plumb.mem-creep/1 here (- for standard output)");
  creep->callback([&o] { o.mode = MemMode::kCreep; });
}

void add_file_and_device(CLI::App* c, MemOptions& o) {
  c->add_option("FILE", o.file,
                "A snapshot (torch.cuda.memory._dump_snapshot pickle, or its JSON) or "
                "plumb.mem-events/1 lines")
      ->required();
  c->add_option("--device", o.device, "Which device's trace")->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

void add_policy_options(CLI::App* c, MemOptions& o) {
  c->add_option("--policies", o.policies,
                "Allocator policies to compare (all, or names: pytorch, expandable, max-split-128, "
                "roundup-4, torch_npu, best-fit, bucketed; settings after a colon, e.g. "
                "pytorch:max_split_size_mb=256)")
      ->capture_default_str();
  c->add_option("--capacity", o.capacity,
                "Bytes the allocator may reserve, e.g. 94G (default: the trace's own at its OOM, "
                "else unlimited)");
  c->add_option("--threads", o.threads,
                "Policies replayed at once (1: one after another; the results are the same)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

void setup_replay(CLI::App& app, MemOptions& o) {
  CLI::App* replay = app.add_subcommand(
      "replay", "Replay the allocations under allocator policies side by side: peak reserved, "
                "fragmentation, and who runs out at a capacity");
  add_file_and_device(replay, o);
  add_policy_options(replay, o);
  replay->add_option("--json", o.json, "Write plumb.mem-replay/1 here (- for standard output)");
  replay->callback([&o] { o.mode = MemMode::kReplay; });
}

void setup_mem_report(CLI::App& app, MemOptions& o) {
  CLI::App* report = app.add_subcommand(
      "report", "One self-contained HTML page: the timeline by category, fragmentation, creep and "
                "the policy comparison");
  add_file_and_device(report, o);
  add_policy_options(report, o);
  report->add_option("--step-regex", o.step_regex, "As for plumb mem analyze");
  report->add_option("--category-rules", o.category_rules, "As for plumb mem analyze");
  report->add_option("-o,--output", o.output, "The HTML file (- for standard output)")
      ->capture_default_str();
  report->add_flag("--by-event", o.by_event, "Event index on the x axis even when the trace has times");
  report->callback([&o] { o.mode = MemMode::kReport; });
}

}  // namespace

void setup_mem(CLI::App& app, MemOptions& o) {
  app.require_subcommand(1);
  CLI::App* analyze = app.add_subcommand(
      "analyze", "Timeline, peak by category, fragmentation, creep (leaks) and each OOM's cause");
  analyze->add_option("FILE", o.file,
                      "A snapshot (torch.cuda.memory._dump_snapshot pickle, or its JSON), "
                      "plumb.mem-events/1 lines, or torch.cuda.memory_stats() dumps (JSONL)")
      ->required();
  analyze->add_option("--device", o.device, "Which device's trace (memory_stats() dumps hold one device)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  analyze->add_option("--step-regex", o.step_regex,
                      "A step begins where a frame's function name starts matching this "
                      "(default: the trace's marks, ProfilerStep#N, else the repeating pattern)");
  analyze->add_option("--category-rules", o.category_rules,
                      "'category = regex' lines replacing the default frame rules");
  analyze->add_option("--json", o.json, "Write plumb.mem/1 here (- for standard output)");
  analyze->add_option("--timeline", o.timeline,
                      "Write allocated/active/reserved after every event here (CSV)");
  analyze->callback([&o] { o.mode = MemMode::kAnalyze; });
  setup_replay(app, o);
  setup_mem_report(app, o);
  setup_creep(app, o);
}

int run_mem(const MemOptions& o) {
  prefer_small_pages_where_given_back();  // common/huge_pages.h: measured on this project's VM
  switch (o.mode) {
    case MemMode::kAnalyze: return run_analyze(o);
    case MemMode::kReplay: return run_replay(o);
    case MemMode::kReport:
      return run_mem_report(o);
    case MemMode::kCreep: return run_creep(o);
    case MemMode::kNone: break;
  }
  return static_cast<int>(ExitCode::kBadInput);
}

}  // namespace plumb::cli
