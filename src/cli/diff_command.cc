#include "cli/diff_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#include "baseline/diff.h"
#include "baseline/record_kind.h"
#include "baseline/recovery_diff.h"
#include "baseline/serve_diff.h"
#include "baseline/set_diff.h"
#include "baseline/step_diff.h"
#include "cli/record_source.h"
#include "cli/store_option.h"
#include "common/error.h"
#include "common/output_file.h"
#include "report/diff_reporter.h"
#include "report/memory_baseline_reporter.h"
#include "report/recovery_reporter.h"
#include "report/serve_diff_reporter.h"
#include "report/serve_reporter.h"
#include "report/set_diff_reporter.h"
#include "report/step_diff_reporter.h"

namespace plumb::cli {
namespace {

void write_json(const nlohmann::json& doc, OutputFile& file) {
  file.stream() << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  file.commit();
}

// Two step records (plumb step --save): step time, exposed communication, straggler.
int run_step_diff(const baseline::Record& a, const baseline::Record& b,
                  const baseline::DiffOptions& options, const DiffOptions& o,
                  std::optional<OutputFile>& json) {
  const baseline::StepDiff d = baseline::step_diff(a, b, options);
  if (json) write_json(baseline::step_diff_json(d), *json);
  if (o.json != "-") report::print_step_diff(d, std::cout);
  return d.exit_code();
}

// Two serving records (plumb serve --store): run by run, each latency and throughput.
int run_serve_diff(const baseline::Record& a, const baseline::Record& b,
                   const baseline::DiffOptions& options, const DiffOptions& o,
                   std::optional<OutputFile>& json) {
  const baseline::ServeDiff d =
      baseline::diff_serve(report::serve_from_json(a.serve, record_name(o.a, a)),
                           report::serve_from_json(b.serve, record_name(o.b, b)), options);
  if (json) write_json(baseline::serve_diff_json(d), *json);
  if (o.json != "-") report::print_serve_diff(d, std::cout);
  return d.exit_code();
}

// Two recovery baselines (plumb run --save): detection, recovery and down time, steps lost.
int run_recovery_diff(const baseline::Record& a, const baseline::Record& b,
                      const baseline::DiffOptions& options, const DiffOptions& o,
                      std::optional<OutputFile>& json) {
  const baseline::RecoveryDiff d = baseline::recovery_diff(a, b, options);
  if (json) write_json(baseline::recovery_diff_json(d), *json);
  if (o.json != "-") report::print_recovery_diff(d, std::cout);
  return d.exit_code();
}

// Two comm records: busbw per collective and size, with the runs' noise.
int run_comm_diff(const baseline::Record& a, const baseline::Record& b,
                  const baseline::DiffOptions& options, const DiffOptions& o,
                  std::optional<OutputFile>& json) {
  const baseline::Diff d = baseline::diff(a, b, options);
  if (json) write_json(baseline::diff_json(d), *json);
  if (o.json != "-") report::print_diff(d, o.all, std::cout);
  return d.exit_code();
}

baseline::PartReaders set_part_readers() {
  return {[](const nlohmann::json& part, const std::string& origin) {
            return report::memory_baseline_from_json(part, origin);
          },
          report::serve_from_json};
}

// Two baseline sets (plumb baseline --workload): each part by its own diff, the one-variable
// check, a go/no-go line.
int run_set_diff(const baseline::Record& a, const baseline::Record& b,
                 const baseline::DiffOptions& options, const DiffOptions& o,
                 std::optional<OutputFile>& json) {
  const baseline::SetDiff d =
      baseline::set_diff(a, b, options, set_part_readers());
  if (json) write_json(baseline::set_diff_json(d), *json);
  if (o.json != "-") report::print_set_diff(d, o.all, std::cout);
  return d.exit_code();
}

// How plumb diff compares each kind of record (baseline/record_kind.h).
struct Differ {
  baseline::RecordKind kind;
  int (*run)(const baseline::Record&, const baseline::Record&, const baseline::DiffOptions&,
             const DiffOptions&, std::optional<OutputFile>&);
};
constexpr Differ kDiffers[] = {
    {baseline::RecordKind::kComm, run_comm_diff},
    {baseline::RecordKind::kStep, run_step_diff},
    {baseline::RecordKind::kRecovery, run_recovery_diff},
    {baseline::RecordKind::kSet, run_set_diff},
    {baseline::RecordKind::kServe, run_serve_diff},
};

}  // namespace

void setup_diff(CLI::App& app, DiffOptions& o) {
  app.add_option("A", o.a, "The reference: a baseline id, latest, or a JSON file")->required();
  app.add_option("B", o.b, "The run to judge: a baseline id, latest, or a JSON file")->required();
  app.add_option("--db", o.db, kStoreOptionHelp);
  app.add_option("-t,--threshold", o.threshold_percent,
                 "Percent: a smaller busbw (step time, exposed communication, recovery figure, "
                 "memory level or leak rate) change is never a regression; a halving always is, "
                 "whatever this is")
      ->capture_default_str()->check(CLI::Range(0.0, 100.0));
  app.add_flag("--all", o.all,
               "List the rows within the threshold too (baseline sets: each part's comparison "
               "whole)");
  app.add_flag("--strict", o.strict,
               "Fail on a single size's regression too, not only on a collective's over the "
               "sizes ≥ 1 MiB (for quiet clusters)");
  app.add_option("--json", o.json,
                 "Write plumb.diff/1 (plumb.step-diff/1 for step records, plumb.recovery-diff/1 "
                 "for recovery records, plumb.set-diff/1 for baseline sets) here (- for standard "
                 "output)");
  app.footer(fmt::format(
      "Exit status: 0 no regression; 1 a regression (busbw lower beyond the threshold and the "
      "noise, or by 2x or more whatever the noise and the threshold), or B has wrong results or "
      "failed a check of its own tool; 2 bad input (including a run that measured nothing, two "
      "that share no measurement, a sweep that ended early in A or B, or an A with wrong "
      "results); {} too noisy to judge: a change beyond the threshold but within the runs' "
      "noise, and no regression (rerun with more --rounds, or import several logs of the same "
      "test as one record). A record that is not valid is named first. Two "
      "step records (plumb step --save) are compared by step time and exposed communication, "
      "with the steps' spread as the noise. Two recovery records (plumb run --save) are compared "
      "by detection, recovery and down time, steps lost and the share resumed after the "
      "checkpoint, judged by the threshold alone. Two baseline sets (plumb baseline --workload) "
      "are compared part by part — comm, model step, memory (settled level, creep, the "
      "checkpoint check), recovery — each by its own diff; a part only one set holds is named "
      "with the other's reason, a part that cannot be compared is named (exit 2 unless another "
      "regressed); then every topology, version and setting difference, with a warning when more "
      "than one variable changed, and a go/no-go line. --all shows each part's comparison whole.",
      baseline::kTooNoisyExitCode));
}

int run_diff(const DiffOptions& o) {
  const std::vector<NamedPath> outputs = {{"--json", o.json}};
  refuse_overlapping_paths(outputs, record_inputs({o.a, o.b}, o.db));
  std::optional<OutputFile> json;
  if (!o.json.empty()) json.emplace("--json", o.json);
  const baseline::Record a = load_record(o.a, o.db);
  const baseline::Record b = load_record(o.b, o.db);
  const baseline::DiffOptions options{o.threshold_percent / 100.0, o.strict, record_name(o.a, a),
                                      record_name(o.b, b)};
  baseline::check_same_kind(a, b, options);
  for (const Differ& d : kDiffers) {
    if (d.kind == baseline::kind_of(a)) return d.run(a, b, options, o, json);
  }
  // Every kind has its entry above; a new kind without one is refused, never passed silently.
  throw Error(fmt::format("plumb diff cannot compare {} yet", baseline::kind_info(baseline::kind_of(a)).held));
}

}  // namespace plumb::cli
