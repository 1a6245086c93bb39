#include "cli/step_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>
#include <optional>
#include <thread>

#include "baseline/store.h"
#include "cli/record_source.h"
#include "cli/store_option.h"
#include "common/console.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/json.h"
#include "common/regex.h"
#include "common/yaml_strict.h"
#include "common/output_file.h"
#include "common/progress.h"
#include "common/units.h"
#include "report/step_console_reporter.h"
#include "report/step_csv_reporter.h"
#include "report/step_html.h"
#include "report/step_json_reporter.h"
#include "step/analysis.h"
#include "step/baseline_match.h"
#include "step/readers.h"

namespace plumb::cli {
namespace {

// The step pattern compiles and has a group for the step number.
void check_step_regex(const std::string& pattern) {
  if (Regex(pattern, "--step-regex").captures() < 1) {
    throw Error(fmt::format("--step-regex '{}': needs a capture group for the step number, "
                            "e.g. 'ProfilerStep#(\\d+)'",
                            pattern));
  }
}

std::vector<NamedPath> input_paths(const StepOptions& o,
                                   const std::vector<step::TraceInput>& inputs) {
  std::vector<NamedPath> out = record_inputs({o.baseline}, o.db);
  for (const step::TraceInput& input : inputs) out.push_back({"PATH", input.path.string()});
  if (!o.plan.empty()) out.push_back({"--plan", o.plan});
  return out;
}

std::vector<step::RankTrace> read_all(const std::vector<step::TraceInput>& inputs,
                                      const StepOptions& o) {
  int jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Progress progress(stderr, Progress::is_terminal(stderr));
  size_t done = 0;
  uint64_t bytes = 0;
  step::ReadOptions read_options{o.step_regex};
  std::vector<step::RankTrace> traces =
      step::read_traces(inputs, read_options, jobs, [&](size_t, const step::RankTrace& t) {
        bytes += t.bytes_read;
        progress.update(++done, inputs.size(),
                        fmt::format("read rank {} ({} of trace so far)", t.rank,
                                    format_bytes(bytes)));
      });
  progress.clear();
  return traces;
}

step::AnalysisOptions analysis_options(const StepOptions& o, comm::MeasuredOn& baseline_on) {
  step::AnalysisOptions options;
  options.step_regex = o.step_regex;
  options.baseline_layer = o.baseline_layer;
  if (!o.baseline.empty()) {
    baseline::Record record = load_comm_record(
        o.baseline, o.db,
        "plumb step --baseline compares collectives with comm measurements (plumb baseline, "
        "plumb comm --json, plumb import)");
    if (record.rows.empty()) {
      throw Error(fmt::format("--baseline {}: holds no comm measurements to compare collectives "
                              "with",
                              o.baseline));
    }
    options.baseline_rows = record.rows;
    options.baseline = describe_record(record);
    baseline_on = comm::measured_on(record.comm);
  }
  if (!o.plan.empty()) {
    std::string text = read_text_file(o.plan, "--plan");
    std::string problem;
    options.plan = parse_json_or_discarded(text, problem);
    if (options.plan->is_discarded()) {
      throw Error(fmt::format("--plan {}: {}; expected plumb plan --json output", o.plan, problem));
    }
    options.plan_source = o.plan;
  }
  return options;
}

int64_t save_record(const step::StepResult& result, const StepOptions& o) {
  baseline::Record record;
  record.created = utc_timestamp();
  record.label = o.label;
  record.source = "plumb step";
  record.step = report::step_to_json(result);
  baseline::Store store(baseline::store_location(o.db),
                        baseline::StoreMode::kReadWrite);
  return store.save(record);
}

}  // namespace

void setup_step(CLI::App& app, StepOptions& o) {
  app.add_option("PATH", o.paths,
                 "Trace files (Kineto JSON, or the legacy profiler's array of a PyTorch without "
                 "Kineto such as Debian's 1.13 on CPU with gloo; plain or gzip), directories of "
                 "per-rank traces, or Ascend *_ascend_pt directories")
      ->required();
  app.add_option("--baseline", o.baseline,
                 "A comm baseline (id, latest or JSON file): each collective's busbw beside it");
  app.add_option("--baseline-layer", o.baseline_layer,
                 "Compare with this layer of the baseline (world, node, rail, spine) instead of "
                 "the one whose groups have as many ranks");
  app.add_option("--plan", o.plan, "plumb plan --json output: measured beside predicted");
  app.add_option("--step-regex", o.step_regex,
                 "A host annotation whose whole name matches is a step; group 1 is its number")
      ->capture_default_str();
  app.add_option("--json", o.json, "Write plumb.step/1 here (- for standard output)");
  app.add_option("--csv", o.csv, "Write msprof-analyze's step_trace_time columns here");
  app.add_option("--html", o.html, "Write a self-contained HTML report here");
  app.add_flag("--save", o.save, "Store the result as a step record (compare with plumb diff)");
  app.add_option("--label", o.label, "Label of the stored record");
  app.add_option("--db", o.db, kStoreOptionHelp);
  app.add_option("-j,--jobs", o.jobs, "Traces read at once (default: one per core)")
      ->check(CLI::Range(1, 1024));
}

int run_step(const StepOptions& o) {
  check_step_regex(o.step_regex);
  std::vector<step::TraceInput> inputs = step::find_trace_inputs(o.paths);
  const std::vector<NamedPath> outputs = {{"--json", o.json}, {"--csv", o.csv}, {"--html", o.html}};
  refuse_overlapping_paths(outputs, input_paths(o, inputs));
  std::optional<OutputFile> json;
  std::optional<OutputFile> csv;
  std::optional<OutputFile> html;
  if (!o.json.empty()) json.emplace("--json", o.json);
  if (!o.csv.empty()) csv.emplace("--csv", o.csv);
  if (!o.html.empty()) html.emplace("--html", o.html);
  comm::MeasuredOn baseline_on;
  step::AnalysisOptions options = analysis_options(o, baseline_on);
  std::vector<step::RankTrace> traces = read_all(inputs, o);
  // A baseline of another backend, device kind or world size: one line, and a note in the reports.
  const std::string mismatch =
      o.baseline.empty() ? "" : step::baseline_mismatch(options.baseline, baseline_on, traces);
  step::StepResult result = step::analyze(std::move(traces), options);
  if (!mismatch.empty()) {
    fmt::print(std::cerr, "plumb: warning: {}\n", mismatch);
    result.notes.insert(result.notes.begin(), mismatch);
  }
  if (json) {
    report::StepJsonReporter().report(result, json->stream());
    json->commit();
  }
  if (csv) {
    report::StepCsvReporter().report(result, csv->stream());
    csv->commit();
  }
  if (html) {
    report::write_step_html(result, html->stream());
    html->commit();
  }
  // With an output on standard output, the summary goes to standard error.
  bool stdout_taken = o.json == "-" || o.csv == "-" || o.html == "-";
  std::ostream& out = stdout_taken ? std::cerr : std::cout;
  report::StepConsoleReporter().report(result, out);
  if (o.save) out << fmt::format("saved as baseline {}\n", save_record(result, o));
  return 0;
}

}  // namespace plumb::cli
