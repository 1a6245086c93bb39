// Pass or fail for one compared pair: a table of rules (verdict.cc). "msprobe" (the default):
// cosine < 0.99 with max abs error > 0.001, or cosine < 0.9, or max abs error > 1, or NaN/Inf
// at different places, or NaN/Inf in A (msprobe's red mark), or exactly one side all zero → fail;
// "assert-close": torch.testing.assert_close's per-dtype rtol/atol (any element not close → fail).
// Thresholds are flags (--cosine, --max-abs ...). Statistics-mode pairs are judged by the rule's
// statistics form (docs/precision.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "precision/metrics.h"

namespace plumb::precision {

enum class Verdict : uint8_t { kPass, kFail, kUnmatched };
std::string_view verdict_name(Verdict v);  // "pass", "fail", "unmatched"

struct Thresholds {
  double cosine_pass = 0.99;    // msprobe: below this with max abs error above abs_with_cosine fails
  double abs_with_cosine = 0.001;
  double cosine_fail = 0.9;     // below this fails whatever the error
  double max_abs_fail = 1;      // above this fails whatever the cosine
  double stats_rel_fail = 0.5;  // statistics mode: an L2 norm relative error above this fails
};

// The differences of one statistics-mode pair (msprobe dump.json "summary" values): a − b
// (msprobe's "Max diff" = NPU max − Bench max) and |a − b| / |b| (msprobe's MaxRelativeErr, as a
// fraction, not a percentage) for each of max, min, mean and the L2 norm. stat_diffs() fills it.
struct StatDiffs {
  double max_diff = 0, min_diff = 0, mean_diff = 0, norm_diff = 0;
  double max_rel = 0, min_rel = 0, mean_rel = 0, norm_rel = 0;
  // A's max or min is NaN or ±Inf as the dump gives it (absent is not NaN): msprobe's red mark.
  // stat_diffs() leaves it false; compare.cc sets it from the dump's summary.
  bool a_overflow = false;
  double a_max = 0, a_min = 0;  // A's max and min, for the message
};

// msprobe's statistics-mode differences (core/compare/acc_compare.py CalcStatsDiff): equal values
// (both NaN, the same infinity) give 0 and 0; otherwise diff = a − b and rel = |diff / b|, inf
// where b is 0; a NaN or Inf on one side only leaves a non-finite diff, which the statistics
// judges fail.
StatDiffs stat_diffs(const TensorStats& a, const TensorStats& b);

struct Judgement {
  Verdict verdict = Verdict::kPass;
  // Why it failed ("cosine 0.95 < 0.99 and max abs error 0.02 > 0.001"); on a pass, empty or a
  // note on values set aside ("2 Inf in A equal to B's: close (torch.isclose)").
  std::string why;
};

struct Rule {
  std::string_view name;  // "msprobe", "assert-close"
  std::string_view description;
  Judgement (*judge)(const Metrics& m, DType a_dtype, const Thresholds& t);
  Judgement (*judge_stats)(const StatDiffs& d, const Thresholds& t);
};

const std::vector<Rule>& rules();
// The rule by name; an Error (exit 2) listing the known names otherwise.
const Rule& rule_named(std::string_view name);

// torch.testing.assert_close's default (rtol, atol) for a dtype (its _DTYPE_PRECISIONS; 0, 0 for
// integers and bool).
std::pair<double, double> assert_close_tolerances(DType dtype);

}  // namespace plumb::precision
