#include "report/recovery_table.h"

#include "common/stats.h"
#include "supervise/recovery_json.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <vector>

namespace plumb::report {
namespace {

using supervise::Recovery;

std::string seconds(std::optional<double> s) { return s ? fmt::format("{:.2f}", *s) : "-"; }

std::string count_text(std::optional<int64_t> n) { return n ? std::to_string(*n) : "-"; }

// "5 after 4 ✓", "1 after 4 ✗", "-" when unknown.
std::string resumed(const Recovery& r) {
  if (!r.first_step_after) return "-";
  std::string text = r.checkpoint_step
                         ? fmt::format("{} after {}", *r.first_step_after, *r.checkpoint_step)
                         : fmt::format("{} (no checkpoint)", *r.first_step_after);
  if (r.resumed_after_checkpoint) text += *r.resumed_after_checkpoint ? " ok" : " WRONG";
  return text;
}

// The recovery steps that ran, with their times: "reset-device 1.20 s, link-check 0.31 s".
std::string steps(const Recovery& r) {
  std::string out;
  for (const supervise::RecoveryStepTiming& s : r.steps) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {:.2f} s{}", s.name, s.seconds, s.ok ? "" : " FAILED");
  }
  return out.empty() ? "-" : out;
}

void print_medians(const supervise::RecoveryBaseline& b, std::ostream& out) {
  const supervise::RecoveryTotals t = supervise::recovery_totals(b);
  std::vector<double> first;
  for (const Recovery& r : b.recoveries) {
    if (r.restart_to_first_step_seconds) first.push_back(*r.restart_to_first_step_seconds);
  }
  fmt::print(out, "median: detect {} s · recovery steps {} s · restart to first step {} s · "
                  "downtime {} s · steps lost {} in all\n",
             seconds(t.detect_median), seconds(t.recovery_median), seconds(first.empty() ? std::nullopt : std::optional<double>(percentile(first, 50))),
             seconds(t.downtime_median), t.steps_lost);
}

}  // namespace

void print_recovery_table(const supervise::RecoveryBaseline& b, std::ostream& out) {
  fmt::print(out, "recovery baseline: {} attempt{}, {} failure{}{}, {}\n", b.attempts,
             b.attempts == 1 ? "" : "s", b.recoveries.size(), b.recoveries.size() == 1 ? "" : "s",
             b.drill ? fmt::format(" ({} injected by the drill)", b.faults_injected) : "",
             b.result);
  if (b.recoveries.empty()) return;
  fmt::print(out, "{:>3}  {:<10} {:>9} {:>10} {:>9} {:>13} {:>10} {:>9} {:>10}  {:<18} {}\n", "#",
             "kind", "detect s", "recovery s", "backoff s", "first step s", "downtime s",
             "last step", "steps lost", "resumed at", "recovery steps");
  int n = 0;
  for (const Recovery& r : b.recoveries) {
    fmt::print(out,
               "{:>3}  {:<10} {:>9.3f} {:>10.2f} {:>9.2f} {:>13} {:>10} {:>9} {:>10}  {:<18} {}\n",
               ++n, r.kind, r.detect_seconds, r.recovery_seconds(), r.backoff_seconds,
               seconds(r.restart_to_first_step_seconds), seconds(r.downtime_seconds),
               count_text(r.last_step), count_text(r.steps_lost), resumed(r), steps(r));
  }
  print_medians(b, out);
}

}  // namespace plumb::report
