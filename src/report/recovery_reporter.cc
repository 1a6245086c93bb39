#include "report/recovery_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/strings.h"
#include "report/baseline_reporter.h"
#include "report/diff_reporter.h"
#include "supervise/recovery_json.h"

namespace plumb::report {
namespace {

// Every string shown may come from a record read from a file: escaped for the terminal.

std::string seconds_with_unit(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f} s", *v) : std::string("-");
}

template <typename T>
std::string or_dash(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : std::string("-");
}

std::string yes_no(const std::optional<bool>& v) {
  return v ? (*v ? "yes" : "no") : "unknown";
}

std::string step_text(const supervise::RecoveryStepTiming& s) {
  std::string text = fmt::format("{} {:.2f} s", terminal_safe(s.name), s.seconds);
  if (!s.ok) text += " FAILED";
  if (!s.ok && !s.detail.empty()) text += fmt::format(" ({})", terminal_safe(s.detail));
  return text;
}

void print_failure(size_t i, const supervise::Recovery& r, std::ostream& out) {
  fmt::print(out, "failure {}: {} ({}) in attempt {}\n", i + 1, terminal_safe(r.kind),
             terminal_safe(r.detail), r.attempt);
  std::vector<std::string> steps;
  for (const supervise::RecoveryStepTiming& s : r.steps) steps.push_back(step_text(s));
  fmt::print(out, "  detect {:.2f} s; recovery {:.2f} s: {}; backoff {:.2f} s; downtime {}\n",
             r.detect_seconds, r.recovery_seconds(),
             steps.empty() ? std::string("no step") : join(steps, ", "), r.backoff_seconds,
             seconds_with_unit(r.downtime_seconds));
  fmt::print(out, "  steps lost {} (last step {}, checkpoint {}, first step after {}); resumed "
                  "after the checkpoint: {}\n",
             or_dash(r.steps_lost), or_dash(r.last_step), or_dash(r.checkpoint_step),
             or_dash(r.first_step_after), yes_no(r.resumed_after_checkpoint));
}

std::string kinds_text(const supervise::RecoveryBaseline& b) {
  std::vector<std::string> parts;
  for (const auto& [kind, n] : b.failures_by_kind) {
    if (n > 0) parts.push_back(fmt::format("{} {}", terminal_safe(kind), n));
  }
  return parts.empty() ? std::string() : " (" + join(parts, ", ") + ")";
}

// Counts and shares as they read best: steps and failures whole, the share as a percentage.
std::string figure_value(const baseline::RecoveryFigureDiff& f, double v) {
  if (f.field == "resumed_after_checkpoint_ratio") return number(100 * v, "{:.0f}%");
  if (f.field == "failures" || f.field == "steps_lost") return number(v, "{:.0f}");
  return number(v, "{:.2f}");
}

void print_figure(const baseline::RecoveryFigureDiff& f, std::ostream& out) {
  fmt::print(out, "{:<26} {:>9} {:>9} {:>9}  {}{}\n", terminal_safe(f.figure), figure_value(f, f.a),
             figure_value(f, f.b), percent(f.change), baseline::verdict_name(f.verdict),
             f.gates ? "" : " (shown, not judged)");
}

}  // namespace

void print_recovery_record(const baseline::Record& r, const supervise::RecoveryBaseline& b,
                           std::ostream& out) {
  fmt::print(out, "# baseline {} · {} · {}{}\n", r.id, terminal_safe(r.created),
             terminal_safe(r.source), r.label.empty() ? "" : " · " + terminal_safe(r.label));
  fmt::print(out, "# hosts: {}\n", terminal_safe(join(r.hosts, ", ")));
  if (const std::string job = job_summary(r.recovery); !job.empty()) fmt::print(out, "# {}\n", job);
  print_recovery_summary(b, out);
  fmt::print(out, "# plumb export {} for the whole record\n", r.id);
}

void print_recovery_summary(const supervise::RecoveryBaseline& b, std::ostream& out) {
  fmt::print(out, "# recovery record: {} attempt(s), {} failure(s){}, {} after {:.1f} s{}\n",
             b.attempts, b.recoveries.size(), kinds_text(b), terminal_safe(b.result),
             b.wall_seconds,
             b.drill ? fmt::format("; a drill of {} fault(s)", b.faults_injected) : "");
  for (size_t i = 0; i < b.recoveries.size(); ++i) print_failure(i, b.recoveries[i], out);
  const supervise::RecoveryTotals t = supervise::recovery_totals(b);
  fmt::print(out,
             "detect median {}, max {}; recovery median {}, max {}; downtime median {}, "
             "max {}; steps lost {}\n",
             seconds_with_unit(t.detect_median), seconds_with_unit(t.detect_max),
             seconds_with_unit(t.recovery_median), seconds_with_unit(t.recovery_max),
             seconds_with_unit(t.downtime_median), seconds_with_unit(t.downtime_max), t.steps_lost);
}

void print_recovery_diff(const baseline::RecoveryDiff& d, std::ostream& out) {
  fmt::print(out, "# A: {}\n# B: {}\n", ref_text(d.a), ref_text(d.b));
  fmt::print(out,
             "# recovery records: A {} failure(s) in {} attempt(s), {}; B {} failure(s) in {} "
             "attempt(s), {}\n",
             d.failures_a, d.attempts_a, terminal_safe(d.result_a), d.failures_b, d.attempts_b,
             terminal_safe(d.result_b));
  fmt::print(out, "# regression: a figure worse by more than {:.0f}% (too few failures for a "
                  "noise estimate: the threshold alone judges)\n",
             100 * d.threshold);
  fmt::print(out, "{:<26} {:>9} {:>9} {:>9}  {}\n", "figure", "A", "B", "change", "verdict");
  for (const baseline::RecoveryFigureDiff& f : d.figures) print_figure(f, out);
  if (!d.steps.empty()) {
    fmt::print(out, "# each recovery step, median seconds over the failures\n");
    for (const baseline::RecoveryFigureDiff& f : d.steps) print_figure(f, out);
  }
  std::vector<std::string> names;
  for (const baseline::RecoveryFigureDiff& f : d.figures) {
    if (f.gates && f.verdict == baseline::Verdict::kRegression) names.push_back(f.figure);
  }
  if (names.empty()) {
    fmt::print(out, "no regression beyond the threshold\n");
  } else {
    fmt::print(out, "REGRESSION: {} regression(s) of B against A beyond the threshold: {}\n",
               names.size(), join(names, "; "));
  }
}

}  // namespace plumb::report
