#include "report/set_diff_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <string>

#include "baseline/context_diff.h"
#include "common/strings.h"
#include "common/units.h"
#include "report/diff_reporter.h"
#include "report/recovery_reporter.h"
#include "report/serve_diff_reporter.h"
#include "report/step_diff_reporter.h"

namespace plumb::report {
namespace {

// Every string shown may come from a record read from a file: escaped for the terminal.
std::string named_ref_text(const baseline::RecordRef& r) {
  std::string text = terminal_safe(r.name);
  if (!r.label.empty()) text += " · " + terminal_safe(r.label);
  if (!r.created.empty()) text += " · " + terminal_safe(r.created);
  return text;
}

// "regression: ...", "only in A (B: skipped (--skip recovery))".
std::string verdict_text(const baseline::SetPart& p) {
  const std::string_view v = baseline::part_verdict_name(p.verdict);
  const bool named = p.verdict == baseline::PartVerdict::kOnlyInA ||
                     p.verdict == baseline::PartVerdict::kOnlyInB ||
                     p.verdict == baseline::PartVerdict::kInNeither;
  const std::string upper = p.verdict == baseline::PartVerdict::kRegression ? "REGRESSION"
                            : p.verdict == baseline::PartVerdict::kTooNoisy ? "TOO NOISY TO JUDGE"
                                                                           : std::string(v);
  return named ? fmt::format("{} ({})", upper, terminal_safe(p.headline))
               : fmt::format("{}: {}", upper, terminal_safe(p.headline));
}

void print_full(const baseline::SetPart& p, std::ostream& out) {
  if (!p.comm && !p.step && !p.memory && !p.recovery && !p.serve) return;
  fmt::print(out, "## {}: the whole comparison\n", p.name);
  if (p.comm) print_diff(*p.comm, true, out);
  if (p.step) print_step_diff(*p.step, out);
  if (p.memory) print_memory_diff(*p.memory, out);
  if (p.recovery) print_recovery_diff(*p.recovery, out);
  if (p.serve) print_serve_diff(*p.serve, out);
}

void print_part(const baseline::SetPart& p, bool all, std::ostream& out) {
  fmt::print(out, "{:<9} {}\n", p.name, verdict_text(p));
  for (const std::string& d : p.details) fmt::print(out, "{:<9} {}\n", "", terminal_safe(d));
  if (all) print_full(p, out);
}

void print_context(const baseline::SetDiff& d, std::ostream& out) {
  fmt::print(out, "# context: {}\n", baseline::context_headline(d.variables, d.unrecorded));
  for (const baseline::VariableDiff& v : d.variables) {
    fmt::print(out, "  {:<9} {:<28} {}  ->  {}\n", v.kind, terminal_safe(v.name),
               terminal_safe(v.a), terminal_safe(v.b));
  }
  const std::string w = d.warning();
  fmt::print(out, "# {}{}\n", w.empty() ? "" : "warning: ", terminal_safe(d.variables_line()));
}

std::string bytes_or_dash(double v) {
  return std::isnan(v) ? std::string("-") : format_bytes(static_cast<uint64_t>(std::llround(v)));
}

std::string rate_or_dash(double v) {
  if (std::isnan(v)) return "-";
  return (v < 0 ? "-" : "+") + format_bytes(static_cast<uint64_t>(std::llround(std::abs(v))));
}

std::string percent_or_dash(double change) {
  return std::isnan(change) ? std::string("-") : fmt::format("{:+.1f}%", 100 * change);
}

}  // namespace

void print_memory_diff(const baseline::MemoryDiff& d, std::ostream& out) {
  fmt::print(out, "{:<8} {:>11} {:>11} {:>8} {:<20} {:>12} {:>12}  {}\n", "rank", "settled A",
             "settled B", "change", "verdict", "creep A", "creep B", "verdict");
  for (size_t i = 0; i < d.levels.size(); ++i) {
    const baseline::MemoryLevelDiff& l = d.levels[i];
    const baseline::MemoryCreepDiff& c = d.creeps[i];
    fmt::print(out, "{:<8} {:>11} {:>11} {:>8} {:<20} {:>12} {:>12}  {}\n",
               terminal_safe(l.rank.empty() ? "(none)" : l.rank), bytes_or_dash(l.a_bytes),
               bytes_or_dash(l.b_bytes), percent_or_dash(l.change),
               baseline::verdict_name(l.verdict), rate_or_dash(c.slope_a), rate_or_dash(c.slope_b),
               baseline::verdict_name(c.verdict));
  }
  fmt::print(out, "checkpoint check: {} in A, {} in B: {}\n", d.checkpoint.verdict_a,
             d.checkpoint.verdict_b, baseline::verdict_name(d.checkpoint.verdict));
}

void print_set_diff(const baseline::SetDiff& d, bool all, std::ostream& out) {
  fmt::print(out, "# baseline sets · A: {}\n", named_ref_text(d.a));
  fmt::print(out, "# baseline sets · B: {}\n", named_ref_text(d.b));
  fmt::print(out, "# each part by its own diff, threshold {:.0f}%{}\n", 100 * d.threshold,
             all ? "; each shown whole under its line" : " (--all shows each whole)");
  for (const baseline::SetPart& p : d.parts) print_part(p, all, out);
  print_context(d, out);
  fmt::print(out, "{}\n", terminal_safe(d.go_line()));
}

}  // namespace plumb::report
