#include "report/serve_diff_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/strings.h"
#include "report/diff_reporter.h"

namespace plumb::report {
namespace {

using baseline::Verdict;

std::string figure_number(double v) {
  return std::isnan(v) ? std::string("-") : fmt::format("{:.4g}", v);
}

std::string repeats_text(int n) { return n == 0 ? std::string("one run") : fmt::format("{} repeats", n); }

void print_run(const baseline::ServeRunDiff& r, std::ostream& out) {
  if (r.verdict == Verdict::kOnlyInA || r.verdict == Verdict::kOnlyInB) {
    fmt::print(out, "{}: {}\n", r.load, baseline::verdict_name(r.verdict));
    return;
  }
  fmt::print(out, "{} (A {}, B {})\n", r.load, repeats_text(r.repeats_a), repeats_text(r.repeats_b));
  fmt::print(out, "  {:<26} {:>10} {:>10} {:>8} {:>6}  {}\n", "figure", "A", "B", "change", "noise",
             "verdict");
  for (const baseline::ServeFigureDiff& f : r.figures) {
    fmt::print(out, "  {:<26} {:>10} {:>10} {:>8} {:>6}  {}\n",
               fmt::format("{} ({})", f.figure, f.unit), figure_number(f.a), figure_number(f.b),
               percent(f.change), fmt::format("{:.0f}%", 100 * f.noise),
               baseline::verdict_name(f.verdict));
  }
}

void print_variables(const baseline::ServeDiff& d, std::ostream& out) {
  if (d.variables.empty()) {
    fmt::print(out, "# setup: the same url, api, model, arrival, dataset, seed, cards and SLO\n");
    return;
  }
  fmt::print(out, "# setup: {} difference(s)\n", d.variables.size());
  for (const baseline::VariableDiff& v : d.variables) {
    fmt::print(out, "  {:<9} {}  ->  {}\n", v.name, terminal_safe(v.a), terminal_safe(v.b));
  }
  if (const std::string w = d.attribution_warning(); !w.empty()) fmt::print(out, "# warning: {}\n", w);
}

void print_verdict(const baseline::ServeDiff& d, std::ostream& out) {
  std::vector<std::string> names;
  for (const baseline::ServeRunDiff& r : d.runs) {
    for (const baseline::ServeFigureDiff& f : r.figures) {
      if (f.verdict == Verdict::kRegression) names.push_back(r.load + " " + f.figure);
    }
  }
  if (!names.empty()) {
    fmt::print(out, "REGRESSION: {} regression(s) of B against A beyond the threshold and the "
                    "noise: {}\n", names.size(), join(names, ", "));
  } else if (const int noisy = d.too_noisy(); noisy > 0) {
    fmt::print(out, "TOO NOISY TO JUDGE: {} figure(s) changed by more than {:.0f}% but within the "
                    "noise of the repetitions, none by {}× or more; {}\n",
               noisy, 100 * d.threshold, baseline::kGrossFactor, d.too_noisy_advice());
  } else {
    fmt::print(out, "no regression beyond the threshold and the noise\n");
  }
}

}  // namespace

void print_serve_diff(const baseline::ServeDiff& d, std::ostream& out) {
  fmt::print(out, "# A: {}\n# B: {}\n", terminal_safe(d.a_name), terminal_safe(d.b_name));
  fmt::print(out, "# regression: a latency longer, or a throughput lower, by more than {:.0f}% and "
                  "by more than the noise ({} standard deviations of the change, from the "
                  "repetitions' spread), or by {}× or more whatever the noise\n",
             100 * d.threshold, baseline::kNoiseSigmas, baseline::kGrossFactor);
  for (const baseline::ServeRunDiff& r : d.runs) print_run(r, out);
  for (const std::string& note : d.notes) fmt::print(out, "# note: {}\n", terminal_safe(note));
  print_variables(d, out);
  print_verdict(d, out);
}

void write_serve_diff_json(const baseline::ServeDiff& d, std::ostream& out) {
  out << baseline::serve_diff_json(d).dump(2) << '\n';
}

}  // namespace plumb::report
