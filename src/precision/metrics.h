// What differs between two tensors, element by element, in float64 accumulators (metrics.cc), and
// one tensor's statistics. Tensor `a` is the one under test (msprobe's "NPU" side) and `b` the
// reference (msprobe's "Bench"); relative errors are taken against b. docs/precision.md gives
// every formula and its source (msprobe's compare documentation; torch.testing.assert_close).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "precision/tensor.h"

namespace plumb::precision {

inline constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

struct MetricOptions {
  uint64_t ulp_threshold = 1;   // ulp_beyond_share counts elements more than this many ULP apart
  std::optional<double> rtol;   // assert-close tolerances; unset: torch's defaults for the two
  std::optional<double> atol;   // dtypes, the loosest of them (torch.testing.assert_close)
  int threads = 1;              // one pair of ≥ 2^20 elements split over this many threads
                                // (contiguous parts, merged in order; sums may differ in the
                                // last bits from one thread's)
};

struct Metrics {
  uint64_t elements = 0;
  // msprobe's cosine, each side scaled by its largest magnitude first (no underflow or overflow);
  // kUndefined where msprobe writes N/A or Unsupported: NaN/Inf at different places, a single
  // element, or exactly one side all zero (zero_a, zero_b).
  double cosine = kUndefined;
  double max_abs_err = 0;
  double max_rel_err = 0;
  double mean_abs_err = 0;
  double rmse = 0;
  double euclidean = 0;
  double one_thousandth_ratio = 0;    // share of elements with relative error < 0.001 (msprobe)
  double five_thousandths_ratio = 0;  // < 0.005
  uint64_t max_ulp = 0;               // in a's type (integers: the absolute difference)
  double ulp_beyond_share = 0;        // share of elements more than ulp_threshold ULP apart
  uint64_t not_close = 0;             // elements failing |a − b| ≤ atol + rtol·|b| (assert_close)
  uint64_t nan_a = 0, nan_b = 0, inf_a = 0, inf_b = 0;
  // Every compared element of A (B) is 0, NaN and Inf set to 0 as msprobe does; set where the
  // msprobe metrics are defined (no NaN/Inf at different places, at least one element).
  bool zero_a = false, zero_b = false;
  double norm_ratio = kUndefined;  // ‖A‖₂ / ‖B‖₂ where both sides are non-zero (same conditions)
  double rtol = 0, atol = 0;          // the tolerances not_close was counted with
};

// a and b must have the same number of elements (the caller reports "shape unmatched"
// otherwise; an Error here); their dtypes may differ (each element is widened exactly to double;
// ULP distances are counted in a's type). Complex tensors compare with complex tensors only, as
// pairs of reals (an Error otherwise). Where msprobe writes N/A (NaN/Inf at different places on
// the two sides, empty tensors) the msprobe metrics are kUndefined. Pairs of float32 and narrower
// types take one pass over the bytes; a float64 pair whose values are so small or large that
// their squares leave [2^-600, 2^600], or an all-zero side, takes a second for the cosine.
Metrics compare_tensors(const Tensor& a, const Tensor& b, const MetricOptions& options = {});

struct TensorStats {
  uint64_t elements = 0;
  uint64_t nan = 0, inf = 0;
  double min = kUndefined, max = kUndefined, mean = kUndefined, std = kUndefined;  // finite elements
  double l2norm = kUndefined;
};

TensorStats tensor_stats(const Tensor& t);

}  // namespace plumb::precision
