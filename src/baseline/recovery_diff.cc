#include "baseline/recovery_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "baseline/record_kind.h"
#include "common/error.h"
#include "common/stats.h"
#include "supervise/recovery_json.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;
using supervise::RecoveryTotals;

double or_nan(const std::optional<double>& v) { return v.value_or(kNaN); }

// The figures compared, in the order shown. `higher_is_worse`: a rise is the regression (the
// share resumed right after the checkpoint regresses when it falls).
struct RecoveryFigureSpec {
  const char* figure;
  const char* field;
  bool higher_is_worse;
  bool gates;
  double (*value)(const RecoveryTotals&);
};
constexpr std::array<RecoveryFigureSpec, 8> kRecoveryFigures = {{
    {"failures", "failures", true, false,
     [](const RecoveryTotals& t) { return static_cast<double>(t.failures); }},
    {"detect s, median", "detect_seconds_median", true, true,
     [](const RecoveryTotals& t) { return or_nan(t.detect_median); }},
    {"detect s, max", "detect_seconds_max", true, true,
     [](const RecoveryTotals& t) { return or_nan(t.detect_max); }},
    {"recovery s, median", "recovery_seconds_median", true, true,
     [](const RecoveryTotals& t) { return or_nan(t.recovery_median); }},
    {"recovery s, max", "recovery_seconds_max", true, true,
     [](const RecoveryTotals& t) { return or_nan(t.recovery_max); }},
    {"downtime s, median", "downtime_seconds_median", true, true,
     [](const RecoveryTotals& t) { return or_nan(t.downtime_median); }},
    {"steps lost", "steps_lost", true, true,
     [](const RecoveryTotals& t) { return static_cast<double>(t.steps_lost); }},
    {"resumed after checkpoint", "resumed_after_checkpoint_ratio", false, true,
     [](const RecoveryTotals& t) { return or_nan(t.resumed_ratio); }},
}};

// Beyond the threshold in the worse direction: a regression; from 0 to more (or less), whatever
// the threshold.
Verdict judge(double a, double b, bool higher_is_worse, double threshold) {
  if (std::isnan(a) && std::isnan(b)) return Verdict::kSame;
  if (std::isnan(a)) return Verdict::kOnlyInB;
  if (std::isnan(b)) return Verdict::kOnlyInA;
  const double worse = higher_is_worse ? 1 : -1;
  if (a == 0) {
    if (b == a) return Verdict::kSame;
    return worse * b > 0 ? Verdict::kRegression : Verdict::kImprovement;
  }
  const double change = worse * (b - a) / a;
  if (change > threshold) return Verdict::kRegression;
  return change < -threshold ? Verdict::kImprovement : Verdict::kSame;
}

RecoveryFigureDiff figure_diff(const char* figure, const char* field, double a, double b,
                               bool higher_is_worse, bool gates, double threshold) {
  RecoveryFigureDiff d;
  d.figure = figure;
  d.field = field;
  d.a = a;
  d.b = b;
  d.change = std::isnan(a) || std::isnan(b) || a == 0 ? kNaN : (b - a) / a;
  d.verdict = judge(a, b, higher_is_worse, threshold);
  d.gates = gates;
  return d;
}

// Each recovery step's seconds over the failures, by name.
std::map<std::string, std::vector<double>> step_seconds(const supervise::RecoveryBaseline& b) {
  std::map<std::string, std::vector<double>> out;
  for (const supervise::Recovery& r : b.recoveries) {
    for (const supervise::RecoveryStepTiming& s : r.steps) out[s.name].push_back(s.seconds);
  }
  return out;
}

double median_if_any(const std::vector<double>* v) {
  return v == nullptr || v->empty() ? kNaN : percentile(*v, 50);
}

std::vector<RecoveryFigureDiff> step_diffs(const supervise::RecoveryBaseline& a,
                                           const supervise::RecoveryBaseline& b,
                                           double threshold) {
  const auto sa = step_seconds(a);
  const auto sb = step_seconds(b);
  std::set<std::string> names;
  for (const auto& [name, v] : sa) names.insert(name);
  for (const auto& [name, v] : sb) names.insert(name);
  std::vector<RecoveryFigureDiff> out;
  for (const std::string& name : names) {
    const auto ia = sa.find(name);
    const auto ib = sb.find(name);
    out.push_back(figure_diff(
        name.c_str(), name.c_str(), median_if_any(ia == sa.end() ? nullptr : &ia->second),
        median_if_any(ib == sb.end() ? nullptr : &ib->second), true, false, threshold));
  }
  return out;
}

}  // namespace

RecoveryDiff recovery_diff(const Record& a, const Record& b, const DiffOptions& options) {
  check_same_kind(a, b, options);
  if (!holds_recovery(a)) {
    throw Error(fmt::format("{} holds no recovery record: nothing for a recovery diff",
                            name_of(a, options.a_name)));
  }
  const auto ra = supervise::recovery_from_json(a.recovery, name_of(a, options.a_name));
  const auto rb = supervise::recovery_from_json(b.recovery, name_of(b, options.b_name));
  const RecoveryTotals ta = supervise::recovery_totals(ra);
  const RecoveryTotals tb = supervise::recovery_totals(rb);
  RecoveryDiff d;
  d.a = ref_of(a);
  d.b = ref_of(b);
  d.failures_a = ta.failures;
  d.failures_b = tb.failures;
  d.attempts_a = ra.attempts;
  d.attempts_b = rb.attempts;
  d.result_a = ra.result;
  d.result_b = rb.result;
  d.threshold = options.threshold;
  for (const RecoveryFigureSpec& f : kRecoveryFigures) {
    d.figures.push_back(figure_diff(f.figure, f.field, f.value(ta), f.value(tb), f.higher_is_worse,
                                    f.gates, d.threshold));
  }
  d.steps = step_diffs(ra, rb, d.threshold);
  return d;
}

int RecoveryDiff::regressions() const {
  return static_cast<int>(std::count_if(figures.begin(), figures.end(), [](const auto& f) {
    return f.gates && f.verdict == Verdict::kRegression;
  }));
}

int RecoveryDiff::exit_code() const {
  return regressions() > 0 ? static_cast<int>(ExitCode::kCheckFailed) : 0;
}

namespace {

json values_json(const RecoveryFigureDiff& f) {
  return {{"a", number_or_null(f.a)}, {"b", number_or_null(f.b)},
          {"change", number_or_null(f.change)}, {"verdict", verdict_name(f.verdict)},
          {"gates", f.gates}};
}

json figures_json(const std::vector<RecoveryFigureDiff>& figures) {
  json out = json::array();
  for (const RecoveryFigureDiff& f : figures) {
    out.push_back({{"figure", f.figure}, {"field", f.field}});
    out.back().update(values_json(f));
  }
  return out;
}

json steps_json(const std::vector<RecoveryFigureDiff>& steps) {
  json out = json::array();
  for (const RecoveryFigureDiff& f : steps) {
    out.push_back({{"step", f.figure}});
    out.back().update(values_json(f));
  }
  return out;
}

}  // namespace

json recovery_diff_json(const RecoveryDiff& d) {
  return {{"schema", kRecoveryDiffSchema},
          {"a", ref_json(d.a)},
          {"b", ref_json(d.b)},
          {"failures", {{"a", d.failures_a}, {"b", d.failures_b}}},
          {"attempts", {{"a", d.attempts_a}, {"b", d.attempts_b}}},
          {"result", {{"a", d.result_a}, {"b", d.result_b}}},
          {"threshold", d.threshold},
          {"regressions", d.regressions()},
          {"exit_code", d.exit_code()},
          {"figures", figures_json(d.figures)},
          {"steps", steps_json(d.steps)}};
}

}  // namespace plumb::baseline
