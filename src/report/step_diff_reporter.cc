#include "report/step_diff_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <string>
#include <vector>

#include "baseline/context_diff.h"
#include "common/strings.h"
#include "report/diff_reporter.h"

namespace plumb::report {
namespace {

void print_figures(const baseline::StepDiff& d, std::ostream& out) {
  fmt::print(out, "{:<22} {:>12} {:>12} {:>9} {:>6}  {}\n", "figure", "A us", "B us", "change",
             "noise", "verdict");
  bool of_step = false;
  for (const baseline::StepFigureDiff& f : d.figures) {
    of_step = of_step || f.of_step_time;
    fmt::print(out, "{:<22} {:>12} {:>12} {:>9} {:>6}  {}{}\n", f.figure, number(f.a_us, "{:.1f}"),
               number(f.b_us, "{:.1f}"), percent(f.change) + (f.of_step_time ? "*" : ""),
               fmt::format("{:.0f}%", 100 * f.noise), baseline::verdict_name(f.verdict),
               f.gates ? "" : " (shown, not judged)");
  }
  if (of_step) fmt::print(out, "# * of A's step time: A had none of it\n");
}

void print_collectives(const baseline::StepDiff& d, std::ostream& out) {
  if (d.collectives.empty()) return;
  fmt::print(out, "# busbw per collective kind, median over its instances (shown, not judged)\n");
  fmt::print(out, "{:<16} {:>6} {:>6} {:>9} {:>9} {:>8} {:>6}  {}\n", "kind", "n A", "n B",
             "busbw A", "busbw B", "change", "noise", "verdict");
  for (const baseline::StepCollectiveDiff& c : d.collectives) {
    fmt::print(out, "{:<16} {:>6} {:>6} {:>9} {:>9} {:>8} {:>6}  {}\n", terminal_safe(c.kind),
               c.instances_a, c.instances_b, number(c.busbw_a, "{:.2f}"),
               number(c.busbw_b, "{:.2f}"), percent(c.change),
               fmt::format("{:.0f}%", 100 * c.noise), baseline::verdict_name(c.verdict));
  }
}

std::string straggler_text(const baseline::StepStraggler& s) {
  return s.rank < 0 ? std::string("none recorded")
                    : fmt::format("rank {} (the others waited {:.1f} us on it)", s.rank,
                                  s.waited_on_us);
}

void print_straggler(const baseline::StepDiff& d, std::ostream& out) {
  fmt::print(out, "# straggler over the trace: A {}; B {}{}\n", straggler_text(d.straggler_a),
             straggler_text(d.straggler_b),
             d.straggler_moved() ? fmt::format("; it moved from rank {} to rank {} (reported, not "
                                               "judged)",
                                               d.straggler_a.rank, d.straggler_b.rank)
                                 : "");
}

void print_variables(const baseline::StepDiff& d, std::ostream& out) {
  fmt::print(out, "# context: {}\n", baseline::context_headline(d.variables, d.unrecorded));
  if (d.variables.empty()) return;
  for (const baseline::VariableDiff& v : d.variables) {
    fmt::print(out, "  {:<9} {:<28} {}  ->  {}\n", v.kind, terminal_safe(v.name),
               terminal_safe(v.a), terminal_safe(v.b));
  }
  if (const std::string w = d.attribution_warning(); !w.empty()) {
    fmt::print(out, "# warning: {}\n", terminal_safe(w));
  }
}

void print_verdict(const baseline::StepDiff& d, std::ostream& out) {
  std::vector<std::string> names;
  for (const baseline::StepFigureDiff& f : d.figures) {
    if (f.gates && f.verdict == baseline::Verdict::kRegression) names.push_back(f.figure);
  }
  if (!names.empty()) {
    fmt::print(out, "REGRESSION: {} regression(s) of B against A beyond the threshold and the "
                    "noise: {}\n", names.size(), join(names, ", "));
  } else if (const int noisy = d.too_noisy(); noisy > 0) {
    fmt::print(out, "TOO NOISY TO JUDGE: {} figure(s) changed by more than {:.0f}% but within the "
                    "noise of the steps, none by {}× or more; {}\n",
               noisy, 100 * d.threshold, baseline::kGrossFactor, d.too_noisy_advice());
  } else {
    fmt::print(out, "no regression beyond the threshold and the noise\n");
  }
}

}  // namespace

void print_step_diff(const baseline::StepDiff& d, std::ostream& out) {
  fmt::print(out, "# A: {}\n# B: {}\n", ref_text(d.a), ref_text(d.b));
  fmt::print(out, "# step records: A {} rank(s) × {} step(s), B {} rank(s) × {} step(s); each "
                  "figure is the median over the steps of the slowest rank's value\n",
             d.ranks_a, d.steps_a, d.ranks_b, d.steps_b);
  fmt::print(out, "# regression: step time or exposed communication longer by more than {:.0f}% "
                  "and by more than the noise ({} standard deviations of the change, from the "
                  "steps' own spread), or by {}× or more whatever the noise\n",
             100 * d.threshold, baseline::kNoiseSigmas, baseline::kGrossFactor);
  print_figures(d, out);
  print_collectives(d, out);
  print_straggler(d, out);
  for (const std::string& note : d.notes) fmt::print(out, "# note: {}\n", note);
  print_variables(d, out);
  print_verdict(d, out);
}

void print_step_record(const baseline::Record& r, const baseline::StepSummary& s,
                       std::ostream& out) {
  fmt::print(out, "# baseline {} · {} · {}{}\n", r.id, terminal_safe(r.created),
             terminal_safe(r.source), r.label.empty() ? "" : " · " + terminal_safe(r.label));
  fmt::print(out, "# hosts: {}\n", terminal_safe(join(r.hosts, ", ")));
  print_step_summary(s, out);
  fmt::print(out, "# plumb export {} for the whole record\n", r.id);
}

void print_step_summary(const baseline::StepSummary& s, std::ostream& out) {
  fmt::print(out, "# step record: {} rank(s) × {} step(s), world size {}\n", s.ranks, s.steps,
             s.world_size < 0 ? std::string("unknown") : std::to_string(s.world_size));
  for (const baseline::StepSummary::Figure& f : s.figures) {
    fmt::print(out, "{}: {} us (median over the steps of the slowest rank)\n", f.figure,
               number(f.median_us, "{:.1f}"));
  }
  for (const baseline::StepSummary::Collective& c : s.collectives) {
    fmt::print(out, "{}: busbw {:.2f} GB/s (median over {} instance(s))\n", terminal_safe(c.kind),
               c.busbw_gbps, c.instances);
  }
  fmt::print(out, "straggler over the trace: {}\n", straggler_text(s.straggler));
}

}  // namespace plumb::report
