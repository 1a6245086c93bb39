#include "report/diff_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>

#include "baseline/context_diff.h"
#include "common/strings.h"
#include "common/units.h"
#include "report/comm_summary_text.h"

namespace plumb::report {
namespace {

std::string raw_ref_text(const baseline::RecordRef& r) {
  std::string text = r.id > 0 ? fmt::format("baseline {}", r.id) : r.source;
  if (!r.label.empty()) text += " · " + r.label;
  if (!r.created.empty()) text += " · " + r.created;
  return text;
}

void print_rows(const baseline::Diff& d, bool all, std::ostream& out) {
  fmt::print(out, "{:<7} {:<14} {:<8} {:>8} {:>9} {:>9} {:>8} {:>10} {:>10} {:>8} {:>6}  {}\n",
             "layer", "collective", "dtype", "size", "busbw A", "busbw B", "change", "p99 A us",
             "p99 B us", "change", "noise", "verdict");
  int hidden = 0;
  for (const baseline::RowDiff& r : d.rows) {
    if (!all && r.verdict == baseline::Verdict::kSame) {
      ++hidden;
      continue;
    }
    fmt::print(out, "{:<7} {:<14} {:<8} {:>8} {:>9} {:>9} {:>8} {:>10} {:>10} {:>8} {:>6}  {}\n",
               r.layer, r.collective, r.dtype, format_bytes(r.bytes), number(r.busbw_a, "{:.2f}"),
               number(r.busbw_b, "{:.2f}"), percent(r.busbw_change), number(r.p99_a, "{:.1f}"),
               number(r.p99_b, "{:.1f}"), percent(r.p99_change),
               fmt::format("{:.0f}%", 100 * r.noise), baseline::verdict_name(r.verdict));
  }
  if (hidden > 0) {
    fmt::print(out, "# {} row(s) within ±{:.0f}% not listed (--all lists them)\n", hidden,
               100 * d.threshold);
  }
}

void print_groups(const baseline::Diff& d, std::ostream& out) {
  if (d.groups.empty()) return;
  fmt::print(out, "# over the sizes ≥ 1 MiB, or all when none is (mean change; noise shrinks with "
                  "the number of sizes)\n");
  for (const baseline::GroupDiff& g : d.groups) {
    fmt::print(out, "{:<7} {:<14} {:<8} {:>2} size(s) ≥ {:<8} {:>8} noise {:>4.0f}%  {}{}\n",
               g.layer, g.collective, g.dtype, g.sizes, format_bytes(g.min_bytes),
               percent(g.change), 100 * g.noise, baseline::verdict_name(g.verdict),
               g.halved > 0 ? fmt::format(" ({} size(s) ≥ 1 MiB halved or worse)", g.halved) : "");
  }
}

// What makes a record not valid, before anything else: "WRONG RESULTS in B (file b.json): ..."
// and the issues, one a line.
void print_diff_validity(const baseline::Diff& d, std::ostream& out) {
  for (const auto& [side, ref] : {std::pair{"A", &d.a}, std::pair{"B", &d.b}}) {
    if (ref->validity.valid()) continue;
    fmt::print(out, "{} in {} ({})\n", join(ref->validity.marks, " · "), side,
               terminal_safe(ref->name));
    for (const std::string& line : ref->validity.lines) {
      fmt::print(out, "  {}\n", terminal_safe(line));
    }
  }
}

// The verdict line of an outcome decided by the records' validity; "" for the others.
std::string validity_verdict(const baseline::Diff& d) {
  const std::string a_marks = join(d.a.validity.marks, " · ");
  switch (d.outcome()) {
    case baseline::Outcome::kWrongResults:
      return "FAILED: B has wrong results: a collective that returns wrong data is broken "
             "whatever its bandwidth";
    case baseline::Outcome::kFailedCheck:
      return "FAILED: B failed a check of its own tool, listed above";
    case baseline::Outcome::kIncomplete: {
      const bool both = d.a.validity.incomplete && d.b.validity.incomplete;
      return fmt::format("INCOMPLETE: {} ended early: the sizes a sweep did not reach cannot be "
                         "judged; rerun {} to the end",
                         both ? "A's and B's sweeps" : d.b.validity.incomplete ? "B's sweep" : "A's sweep",
                         both ? "them" : "it");
    }
    case baseline::Outcome::kBadReference:
      return fmt::format("NO REFERENCE: A is not valid ({}): compare B against a run without "
                         "wrong results or failed checks",
                         a_marks);
    default: return "";
  }
}

void print_verdict(const baseline::Diff& d, std::ostream& out) {
  if (const std::string v = validity_verdict(d); !v.empty()) {
    fmt::print(out, "{}\n", v);
    return;
  }
  const int n = d.regressions();
  const int sizes = d.row_regressions();
  const std::string single =
      sizes > 0 && !d.strict
          ? fmt::format(" ({} single size(s) beyond their noise; --strict fails on those too)", sizes)
          : "";
  if (n > 0) {
    fmt::print(out, "REGRESSION: {} regression(s) of B against A beyond the threshold and the "
                    "noise{}\n", n, single);
  } else if (const int noisy = d.too_noisy(); noisy > 0) {
    fmt::print(out, "TOO NOISY TO JUDGE: {} {} changed by more than {:.0f}% but within the noise of "
                    "the runs, none by {}× or more{}; {}\n",
               noisy, d.strict ? "collective(s) or size(s)" : "collective(s)", 100 * d.threshold,
               baseline::kGrossFactor, single, d.too_noisy_advice());
  } else {
    fmt::print(out, "no regression beyond the threshold and the noise{}\n", single);
  }
}

void print_variables(const baseline::Diff& d, std::ostream& out) {
  fmt::print(out, "# context: {}\n", baseline::context_headline(d.variables, d.unrecorded));
  if (d.variables.empty()) return;
  for (const baseline::VariableDiff& v : d.variables) {
    fmt::print(out, "  {:<9} {:<28} {}  ->  {}\n", v.kind, v.name, v.a, v.b);
  }
  if (const std::string w = d.attribution_warning(); !w.empty()) fmt::print(out, "# warning: {}\n", w);
}

}  // namespace

void print_diff(const baseline::Diff& d, bool all, std::ostream& out) {
  print_diff_validity(d, out);
  fmt::print(out, "# A: {}\n# B: {}\n", raw_ref_text(d.a), raw_ref_text(d.b));
  fmt::print(out, "# regression: busbw lower by more than {:.0f}% and by more than the noise ({} "
                  "standard deviations of the change, from the runs' own spread), or by {}× or "
                  "more whatever the noise\n",
             100 * d.threshold, baseline::kNoiseSigmas, baseline::kGrossFactor);
  print_rows(d, all, out);
  print_groups(d, out);
  print_average_busbw(d.summary_a, d.summary_b, out);
  print_variables(d, out);
  print_verdict(d, out);
}

std::string number(double v, const char* spec) {
  return std::isnan(v) ? std::string("-") : fmt::format(fmt::runtime(spec), v);
}

std::string percent(double change) {
  return std::isnan(change) ? std::string("-") : fmt::format("{:+.1f}%", 100 * change);
}

// Every string shown may come from a record read from a file: escaped for the terminal.
std::string ref_text(const baseline::RecordRef& r) {
  std::string text = r.id > 0 ? fmt::format("baseline {}", r.id) : terminal_safe(r.source);
  if (!r.label.empty()) text += " · " + terminal_safe(r.label);
  if (!r.created.empty()) text += " · " + terminal_safe(r.created);
  return text;
}

}  // namespace plumb::report
