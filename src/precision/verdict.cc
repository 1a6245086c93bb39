// The verdict rules: a table of {name, description, judge, judge_stats}. Sources:
//   msprobe: Ascend/msprobe python/msprobe/core/compare/multiprocessing_compute.py check_accuracy
//     (the thresholds are CompareConst.COS_THRESHOLD 0.99, MAX_ABS_ERR_THRESHOLD 0.001,
//     COS_MAX_THRESHOLD 0.9, MAX_ABS_ERR_MAX_THRESHOLD 1 in core/common/const.py), and for
//     statistics the error rules of docs/zh/accuracy_compare/pytorch_accuracy_compare_instruct.md
//     ("比对结果（Result）": a NaN/Inf statistic on one side only; an output's L2 norm relative
//     error > 0.5);
//   assert-close: torch/testing/_comparison.py (_DTYPE_PRECISIONS, default_tolerances).
#include "precision/verdict.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>

#include "common/error.h"

namespace plumb::precision {
namespace {

Judgement pass() { return {}; }
Judgement fail(std::string why) { return {Verdict::kFail, std::move(why)}; }

// v as short as it can be written while still on its side of `limit` ("0.95", not "0.950000";
// never "0.99 < 0.99").
std::string shown(double v, double limit) {
  for (int digits = 6; digits <= 17; ++digits) {
    std::string text = fmt::format("{:.{}g}", v, digits);
    if (std::stod(text) != limit || v == limit) return text;
  }
  return fmt::format("{}", v);
}

std::string count(uint64_t n, std::string_view what) { return fmt::format("{} {}", n, what); }

std::string nonfinite_why(const Metrics& m) {
  return fmt::format("NaN or Inf at different places in A ({} NaN, {} Inf) and B ({} NaN, {} Inf): "
                     "no msprobe metric is defined",
                     m.nan_a, m.inf_a, m.nan_b, m.inf_b);
}

// msprobe's FLOAT_EPSILON (core/common/const.py, np.finfo(float).eps): a norm at or under it is
// "all zero" to msprobe's cosine.
constexpr double kZeroNorm = 2.220446049250313e-16;

// One side zero against the other. Exactly one side all zero: msprobe's cosine is "Nan" ("All the
// data is Zero in ... dump data") and its check_accuracy then judges the max abs error alone,
// which passes a zero output against a reference of values under 1; plumb fails it. A side whose
// L2 norm is at most ε times the other's is zero at the other's scale (msprobe's ε test, made
// relative: plumb's cosine is computed on scaled values and would otherwise say 1 of A = B × 1e-30).
std::string zero_why(const Metrics& m) {
  if (m.zero_a != m.zero_b) {
    return fmt::format("{} is all zero and {} is not: no cosine (max abs error {:.6g})", m.zero_a ? "A" : "B",
                       m.zero_a ? "B" : "A", m.max_abs_err);
  }
  const double r = m.norm_ratio;
  if (std::isnan(r) || (r > kZeroNorm && r < 1 / kZeroNorm)) return "";
  const bool a_small = r <= kZeroNorm;
  return fmt::format("{} is zero at {}'s scale: its L2 norm is {:.3g} of {}'s, not above msprobe's zero norm {:.3g} "
                     "(max abs error {:.6g})",
                     a_small ? "A" : "B", a_small ? "B" : "A", a_small ? r : 1 / r, a_small ? "B" : "A",
                     kZeroNorm, m.max_abs_err);
}

// NaN/Inf at the same places on both sides: msprobe's handle_inf_nan sets them to 0 before the
// metrics (so two all-NaN tensors have cosine 1), and its highlight rule CheckOverflow marks the
// row red because the NPU side's max or min is nan, inf or -inf. plumb takes the red mark as the
// verdict, and says why the metrics look as they do.
std::string overflow_why(const Metrics& m) {
  if (m.nan_a + m.inf_a == 0) return "";
  return fmt::format("A holds {} and {}, at the same places as B: msprobe sets them to 0 for the metrics and "
                     "marks the pair red (a NaN/Inf max or min in A)",
                     count(m.nan_a, "NaN"), count(m.inf_a, "Inf"));
}

// msprobe check_accuracy, in its order, after the rules above. A cosine msprobe cannot compute (a
// single element) makes every comparison with it false, so such a pair is judged by its max abs
// error alone, as msprobe does for "Unsupported". N/A metrics (NaN/Inf at different places) fail,
// as msprobe's "N/A" does. Empty tensors pass: there is nothing to differ.
Judgement judge_msprobe(const Metrics& m, DType, const Thresholds& t) {
  if (m.elements == 0) return pass();
  if (std::isnan(m.max_abs_err)) return fail(nonfinite_why(m));
  for (std::string why : {overflow_why(m), zero_why(m)}) {
    if (!why.empty()) return fail(std::move(why));
  }
  const double c = m.cosine, e = m.max_abs_err;
  if (c < t.cosine_pass && e > t.abs_with_cosine) {
    return fail(fmt::format("cosine {} < {} and max abs error {} > {}", shown(c, t.cosine_pass),
                            t.cosine_pass, shown(e, t.abs_with_cosine), t.abs_with_cosine));
  }
  if (c < t.cosine_fail) return fail(fmt::format("cosine {} < {}", shown(c, t.cosine_fail), t.cosine_fail));
  if (e > t.max_abs_fail) {
    return fail(fmt::format("max abs error {} > {}", shown(e, t.max_abs_fail), t.max_abs_fail));
  }
  return pass();
}

// torch.testing.assert_close: any element not close fails (NaN is never close: equal_nan=False).
// Infinities equal on both sides are close: a pass that holds some says so.
Judgement judge_assert_close(const Metrics& m, DType a_dtype, const Thresholds&) {
  if (m.not_close == 0) {
    if (m.inf_a == 0) return pass();
    return {Verdict::kPass, fmt::format("{} in A equal to B's: close (torch.isclose)", count(m.inf_a, "Inf"))};
  }
  const bool complex = a_dtype == DType::kComplex64 || a_dtype == DType::kComplex128;
  std::string why = fmt::format("{} of {} {} not close (|a - b| > atol + rtol * |b|, rtol {}, atol {})", m.not_close,
                                complex ? 2 * m.elements : m.elements, complex ? "real components" : "elements",
                                m.rtol, m.atol);
  if (m.nan_a + m.nan_b > 0) {
    why += fmt::format("; NaN is never close (equal_nan=False): {} in A, {} in B", m.nan_a, m.nan_b);
  }
  return fail(std::move(why));
}

// Both rules' statistics form (msprobe's statistics-mode error rules; assert_close has none):
// a statistic that is NaN or Inf on one side only; A's max or min NaN or Inf on both sides (the
// red mark of msprobe's CheckOverflow, as in tensor mode); an L2 norm relative error above
// stats_rel_fail.
Judgement judge_stats(const StatDiffs& d, const Thresholds& t) {
  const std::array<std::pair<const char*, double>, 4> diffs = {
      {{"max", d.max_diff}, {"min", d.min_diff}, {"mean", d.mean_diff}, {"L2 norm", d.norm_diff}}};
  for (const auto& [name, diff] : diffs) {
    if (!std::isfinite(diff)) return fail(fmt::format("{}: NaN or Inf on one side only (diff {})", name, diff));
  }
  if (d.a_overflow) {
    return fail(fmt::format("A's max {} and min {}, the same in B: msprobe marks a NaN/Inf max or min in A red",
                            d.a_max, d.a_min));
  }
  if (d.norm_rel > t.stats_rel_fail) {
    return fail(fmt::format("L2 norm relative error {} > {}", shown(d.norm_rel, t.stats_rel_fail),
                            t.stats_rel_fail));
  }
  return pass();
}

// msprobe CalcStatsDiff for one statistic.
std::pair<double, double> stat_diff(double a, double b) {
  const bool same = a == b || (std::isnan(a) && std::isnan(b));
  if (same) return {0.0, 0.0};
  const double diff = a - b;
  if (!std::isfinite(diff)) return {diff, std::fabs(diff)};
  return {diff, b == 0 ? HUGE_VAL : std::fabs(diff / b)};
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kUnmatched: return "unmatched";
  }
  return "unknown";
}

StatDiffs stat_diffs(const TensorStats& a, const TensorStats& b) {
  StatDiffs d;
  std::tie(d.max_diff, d.max_rel) = stat_diff(a.max, b.max);
  std::tie(d.min_diff, d.min_rel) = stat_diff(a.min, b.min);
  std::tie(d.mean_diff, d.mean_rel) = stat_diff(a.mean, b.mean);
  std::tie(d.norm_diff, d.norm_rel) = stat_diff(a.l2norm, b.l2norm);
  d.a_max = a.max, d.a_min = a.min;
  return d;
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> kRules = {
      {"msprobe",
       "msprobe's check: fail when cosine < 0.99 with max abs error > 0.001, or cosine < 0.9, or "
       "max abs error > 1, or NaN/Inf in A (msprobe's red mark), or one side all zero; statistics: a "
       "NaN/Inf on one side only or in A's max or min, or L2 norm relative error > 0.5",
       &judge_msprobe, &judge_stats},
      {"assert-close",
       "torch.testing.assert_close: fail when any element has |a - b| > atol + rtol * |b| (per-dtype "
       "defaults: float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7, "
       "integers exact; NaN is never close); statistics: as msprobe",
       &judge_assert_close, &judge_stats},
  };
  return kRules;
}

const Rule& rule_named(std::string_view name) {
  std::string known;
  for (const Rule& r : rules()) {
    if (r.name == name) return r;
    known += (known.empty() ? "" : ", ") + std::string(r.name);
  }
  throw Error(fmt::format("unknown rule '{}'; the rules are: {}", name, known));
}

// torch/testing/_comparison.py _DTYPE_PRECISIONS, as (rtol, atol); integers and bool (0, 0).
std::pair<double, double> assert_close_tolerances(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return {0.001, 1e-5};
    case DType::kBFloat16: return {0.016, 1e-5};
    case DType::kFloat32: return {1.3e-6, 1e-5};
    case DType::kFloat64: return {1e-7, 1e-7};
    case DType::kComplex64: return {1.3e-6, 1e-5};
    case DType::kComplex128: return {1e-7, 1e-7};
    default: return {0.0, 0.0};
  }
}

}  // namespace plumb::precision
