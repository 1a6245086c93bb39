// The metrics of one tensor pair and one tensor's statistics, in one pass over the bytes with
// float64 accumulators. Each formula lives in one function below with its source:
//   msprobe: Ascend/msprobe python/msprobe/core/compare/npy_compare.py (handle_inf_nan,
//     get_relative_err, GetCosineSimilarity, GetEuclideanDistance, GetMaxAbsErr, GetMaxRelativeErr,
//     GetErrRatio) and core/common/const.py (CompareConst thresholds), documented in
//     docs/zh/accuracy_compare/pytorch_accuracy_compare_instruct.md ("比对指标计算公式");
//   assert_close: torch/testing/_comparison.py (torch.isclose with equal_nan=False).
//
// Layout: per element type a small traits struct (widen to double exactly, ULP distance in that
// type); a careful per-element kernel templated on a's type that handles NaN/Inf, zeros and
// mixed dtypes; and, for same-dtype float32/float64 pairs, a block kernel written with GCC vector
// extensions (four double lanes, eight integer lanes for the ULP distance) compiled for AVX-512,
// AVX2 and the baseline and chosen at run time. A block whose sums are not finite holds a NaN or
// an Inf: it is redone by the careful kernel. Optionally one pair is split over threads.
#include "precision/metrics.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/error.h"
#include "precision/verdict.h"

namespace plumb::precision {
namespace {

// msprobe's constants (core/common/const.py).
constexpr double kFloatEpsilon = 2.220446049250313e-16;  // Const.FLOAT_EPSILON = np.finfo(float).eps
constexpr double kOneThousandth = 0.001;                  // CompareConst.THOUSAND_RATIO_THRESHOLD
constexpr double kFiveThousandths = 0.005;                // CompareConst.FIVE_THOUSAND_RATIO_THRESHOLD

constexpr size_t kBlock = 2048;  // elements per block: partial sums per block, then compensated
// Software prefetch in the vector path: the hardware prefetcher stops at each 4 KiB page of a
// mapped file; asking for the line this far ahead keeps both inputs streaming (a hint: it never
// faults, even past the end).
constexpr size_t kLine = 64;
constexpr size_t kPrefetchAhead = 2048;
constexpr double kUint64Max = 18446744073709551615.0;
constexpr uint64_t kThreadedMinimum = uint64_t{1} << 20;  // smaller pairs stay on one thread

// ---- element types --------------------------------------------------------------------------

struct Half { uint16_t bits; };
struct BF16 { uint16_t bits; };
struct Bool { uint8_t byte; };

template <class S>
S load(const std::byte* base, size_t i) {
  S v;
  std::memcpy(&v, base + i * sizeof(S), sizeof(S));  // files map at any alignment
  return v;
}

// y rounded to nearest-even in a binary format with `digits` significand bits, smallest normal
// exponent `emin` and largest finite value `max_finite` (overflow gives ±inf).
double round_to_format(double y, int digits, int emin, double max_finite) {
  if (!std::isfinite(y) || y == 0) return y;
  const int e = std::max(std::ilogb(y), emin);
  const double v = std::ldexp(std::nearbyint(std::ldexp(y, digits - 1 - e)), e - digits + 1);
  return std::fabs(v) > max_finite ? std::copysign(HUGE_VAL, y) : v;
}

// Bits of a value exactly representable in binary16.
uint16_t half_bits(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double m = std::fabs(v);
  if (std::isinf(m)) return sign | 0x7c00;
  if (m < 0x1p-14) return sign | static_cast<uint16_t>(m * 0x1p24);
  const int e = std::ilogb(m);
  const auto frac = static_cast<uint16_t>((m * std::ldexp(1.0, -e) - 1) * 1024);
  return sign | static_cast<uint16_t>((e + 15) << 10) | frac;
}

// The order of a sign-magnitude bit pattern as an integer, so that neighbouring values of the
// type differ by 1 and +0 and -0 coincide: the ULP distance is the difference of two orders, the
// number of representable values between them (Bruce Dawson, "Comparing Floating Point Numbers,
// 2012 Edition"). msprobe's compare has no ULP column (its accuracy checker's ULP check is a
// separate tool), so this one is plumb's own.
int64_t ordered(uint64_t bits, int width) {
  const uint64_t sign_bit = uint64_t{1} << (width - 1);
  const auto magnitude = static_cast<int64_t>(bits & (sign_bit - 1));
  return (bits & sign_bit) ? -magnitude : magnitude;
}

uint64_t distance(int64_t a, int64_t b) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  return a > b ? ua - ub : ub - ua;  // exact: the true difference is below 2^64
}

// Integer and bool a: the ULP distance is the absolute difference, rounded up (docs/precision.md).
uint64_t integer_distance(double a, double y) {
  const double d = std::ceil(std::fabs(a - y));
  return d >= kUint64Max ? UINT64_MAX : static_cast<uint64_t>(d);
}

template <class S> struct Traits {  // integers
  static double widen(S v) { return static_cast<double>(v); }
  static uint64_t ulp(S a, double y) { return integer_distance(widen(a), y); }
};
template <> struct Traits<Bool> {
  static double widen(Bool v) { return v.byte ? 1.0 : 0.0; }
  static uint64_t ulp(Bool a, double y) { return integer_distance(widen(a), y); }
};
template <> struct Traits<float> {
  static double widen(float v) { return v; }
  static uint64_t ulp(float a, double y) {
    const auto r = static_cast<float>(y);  // round-to-nearest-even, overflow to ±inf
    return distance(ordered(std::bit_cast<uint32_t>(a), 32), ordered(std::bit_cast<uint32_t>(r), 32));
  }
};
template <> struct Traits<double> {
  static double widen(double v) { return v; }
  static uint64_t ulp(double a, double y) {
    return distance(ordered(std::bit_cast<uint64_t>(a), 64), ordered(std::bit_cast<uint64_t>(y), 64));
  }
};
template <> struct Traits<Half> {
  static double widen(Half v) { return half_to_double(v.bits); }
  static uint64_t ulp(Half a, double y) {
    const uint16_t r = half_bits(round_to_format(y, 11, -14, 65504.0));
    return distance(ordered(a.bits, 16), ordered(r, 16));
  }
};
template <> struct Traits<BF16> {
  static double widen(BF16 v) { return bfloat16_to_double(v.bits); }
  static uint64_t ulp(BF16 a, double y) {
    const double r = round_to_format(y, 8, -126, 0x1.fep127);
    const auto bits = static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16);
    return distance(ordered(a.bits, 16), ordered(bits, 16));
  }
};

// ---- accumulation ---------------------------------------------------------------------------

// Neumaier's compensated sum, for adding block sums (Neumaier 1974, the improved Kahan sum).
struct Sum {
  double s = 0, c = 0;
  void add(double v) {
    const double t = s + v;
    c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
    s = t;
  }
  double value() const { return s + c; }
};

struct Params {
  double rtol = 0, atol = 0;
  uint64_t ulp_threshold = 1;
};

// One block's plain float64 sums and counts.
struct BlockSums {
  double dot = 0, sxx = 0, syy = 0, sum_abs = 0, sum_sq = 0, max_abs = 0, max_rel = 0;
  uint64_t thousandth = 0, five_thousandths = 0, not_close = 0, ulp_beyond = 0, max_ulp = 0;
  uint64_t nan_a = 0, nan_b = 0, inf_a = 0, inf_b = 0, mismatch = 0;
};

struct Totals {
  Sum dot, sxx, syy, sum_abs, sum_sq;
  BlockSums rest;  // maxima and counts
  void add(const Totals& t) {
    for (auto [sum, other] : {std::pair{&dot, &t.dot}, {&sxx, &t.sxx}, {&syy, &t.syy}, {&sum_abs, &t.sum_abs},
                              {&sum_sq, &t.sum_sq}}) {
      sum->add(other->s), sum->add(other->c);
    }
    BlockSums maxima_and_counts = t.rest;
    maxima_and_counts.dot = maxima_and_counts.sxx = maxima_and_counts.syy = 0;
    maxima_and_counts.sum_abs = maxima_and_counts.sum_sq = 0;
    add(maxima_and_counts);
  }
  void add(const BlockSums& b) {
    dot.add(b.dot), sxx.add(b.sxx), syy.add(b.syy), sum_abs.add(b.sum_abs), sum_sq.add(b.sum_sq);
    rest.max_abs = std::max(rest.max_abs, b.max_abs);
    rest.max_rel = std::max(rest.max_rel, b.max_rel);
    rest.max_ulp = std::max(rest.max_ulp, b.max_ulp);
    rest.thousandth += b.thousandth, rest.five_thousandths += b.five_thousandths;
    rest.not_close += b.not_close, rest.ulp_beyond += b.ulp_beyond;
    rest.nan_a += b.nan_a, rest.nan_b += b.nan_b, rest.inf_a += b.inf_a, rest.inf_b += b.inf_b;
    rest.mismatch += b.mismatch;
  }
};

// msprobe get_relative_err: RE = |(N − B) / B|, where a zero B gets FLOAT_EPSILON added to both N
// and B first.
inline double relative_error(double x, double y) {
  const bool zero = y == 0;
  const double yp = zero ? kFloatEpsilon : y;
  const double xp = zero ? x + kFloatEpsilon : x;
  return std::fabs(xp - yp) / std::fabs(yp);
}

// torch.isclose(a, b, rtol, atol, equal_nan=False), the test of assert_close: equal (so ±inf match
// themselves), or both finite and |a − b| ≤ atol + rtol·|b|. NaN is never close.
inline bool is_close(double x, double y, const Params& p) {
  return x == y || (std::isfinite(x) && std::isfinite(y) && std::fabs(x - y) <= p.atol + p.rtol * std::fabs(y));
}

// The msprobe sums of one element pair whose NaN/Inf were already replaced (see careful_element).
inline void accumulate(double x, double y, BlockSums& s) {
  const double d = x - y, ad = std::fabs(d);
  s.dot += x * y, s.sxx += x * x, s.syy += y * y;
  s.sum_abs += ad, s.sum_sq += d * d;
  s.max_abs = std::max(s.max_abs, ad);
  const double rel = relative_error(x, y);
  s.max_rel = std::max(s.max_rel, rel);
  s.thousandth += rel < kOneThousandth;          // msprobe GetErrRatio: RE < threshold, strictly
  s.five_thousandths += rel < kFiveThousandths;
}

// One element, every case: counts NaN/Inf, the assert_close test and the ULP distance on the
// values as stored, then msprobe's handle_inf_nan: where NaN and Inf sit at the same places on
// both sides they become 0 on both sides; anywhere else the pair's msprobe metrics are N/A
// (counted in `mismatch`).
template <class SA>
inline void careful_element(SA raw_a, double y, const Params& p, BlockSums& s) {
  double x = Traits<SA>::widen(raw_a);
  const bool nan_x = std::isnan(x), nan_y = std::isnan(y), inf_x = std::isinf(x), inf_y = std::isinf(y);
  s.nan_a += nan_x, s.nan_b += nan_y, s.inf_a += inf_x, s.inf_b += inf_y;
  s.not_close += !is_close(x, y, p);
  if (nan_x || nan_y) {
    s.ulp_beyond += !(nan_x && nan_y);  // NaN against a number: beyond any threshold; NaN, NaN: 0
  } else {
    const uint64_t u = Traits<SA>::ulp(raw_a, y);
    s.max_ulp = std::max(s.max_ulp, u);
    s.ulp_beyond += u > p.ulp_threshold;
  }
  if (nan_x || nan_y || inf_x || inf_y) {
    s.mismatch += nan_x != nan_y || inf_x != inf_y;
    x = 0, y = 0;
  }
  accumulate(x, y, s);
}

using WidenFn = void (*)(const std::byte* base, size_t first, size_t n, double* out);

template <class S>
void widen_into(const std::byte* base, size_t first, size_t n, double* out) {
  for (size_t i = 0; i < n; ++i) out[i] = Traits<S>::widen(load<S>(base, first + i));
}

template <class SA>
void careful_range(const std::byte* a, const std::byte* b, WidenFn widen_b, size_t first, size_t n,
                   const Params& p, Totals& totals) {
  std::array<double, kBlock> y;
  for (size_t start = first; start < first + n; start += kBlock) {
    const size_t len = std::min(kBlock, first + n - start);
    widen_b(b, start, len, y.data());
    BlockSums s;
    for (size_t i = 0; i < len; ++i) careful_element(load<SA>(a, start + i), y[i], p, s);
    totals.add(s);
  }
}

// ---- the same-dtype fast path ---------------------------------------------------------------

using v4d = double __attribute__((vector_size(32)));
using v4l = int64_t __attribute__((vector_size(32)));
using v4f = float __attribute__((vector_size(16)));
using v8l = int64_t __attribute__((vector_size(64)));
using v8u = uint64_t __attribute__((vector_size(64)));
using v8f = float __attribute__((vector_size(32)));
using v8i = int32_t __attribute__((vector_size(32)));
using v8w = uint32_t __attribute__((vector_size(32)));

// Eight elements of T: their values widened to double in two halves of four lanes (one AVX2
// register each; one instruction widens four floats), and their bit patterns in eight integer
// lanes of T's width (the ULP distance of float32 fits 32-bit lanes: at most 0xff000000).
template <class T> struct Lanes;
template <> struct Lanes<double> {
  using Bits = v8l;
  using Unsigned = v8u;
  static constexpr uint64_t kMagnitude = 0x7fffffffffffffff;
  [[gnu::always_inline]] static inline void load8(const std::byte* p, v4d& lo, v4d& hi, Bits& bits) {
    std::memcpy(&lo, p, sizeof lo);
    std::memcpy(&hi, p + sizeof lo, sizeof hi);
    std::memcpy(&bits, p, sizeof bits);
  }
};
template <> struct Lanes<float> {
  using Bits = v8i;
  using Unsigned = v8w;
  static constexpr uint32_t kMagnitude = 0x7fffffff;
  [[gnu::always_inline]] static inline void load8(const std::byte* p, v4d& lo, v4d& hi, Bits& bits) {
    v4f f0, f1;  // two 16-byte loads widen straight from memory; the bits load a third time
    std::memcpy(&f0, p, sizeof f0);
    std::memcpy(&f1, p + sizeof f0, sizeof f1);
    lo = v4d{f0[0], f0[1], f0[2], f0[3]};  // one vcvtps2pd each (__builtin_convertvector gives two)
    hi = v4d{f1[0], f1[1], f1[2], f1[3]};
    std::memcpy(&bits, p, sizeof bits);
  }
};

[[gnu::always_inline]] inline double lane_sum(const v4d& v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// The vector path's running sums, maxima and counts (4 double lanes; the ULP ones in 8 lanes).
template <class T>
struct VectorSums {
  using Unsigned = typename Lanes<T>::Unsigned;
  v4d dot = {}, sxx = {}, syy = {}, sabs = {}, ssq = {}, mabs = {}, mrel = {};
  v4l c1 = {}, c5 = {}, cfar = {};
  typename Lanes<T>::Bits cbeyond = {};
  Unsigned mulp = {};
};

// accumulate() and the assert_close test over four lanes with no NaN or Inf.
template <class T>
[[gnu::always_inline]] inline void fast_values(const v4d& x, const v4d& y, const v4d& atol, const v4d& rtol,
                                               VectorSums<T>& v) {
  const v4d zero = {}, eps = zero + kFloatEpsilon;
  const v4l abs_mask = v4l{} + 0x7fffffffffffffff;
  const v4d d = x - y;
  const v4d ad = (v4d)((v4l)d & abs_mask);
  v.dot += x * y, v.sxx += x * x, v.syy += y * y, v.sabs += ad, v.ssq += d * d;
  v.mabs = ad > v.mabs ? ad : v.mabs;
  const v4l yzero = y == zero;
  const v4d yp = yzero ? eps : y;
  const v4d num = yzero ? (x + eps) - eps : d;  // (N + eps) − (B + eps) where B is 0
  const v4d rel = (v4d)((v4l)(num / yp) & abs_mask);  // numpy: abs(divide(n - b, b))
  v.mrel = rel > v.mrel ? rel : v.mrel;
  v.c1 -= rel < zero + kOneThousandth, v.c5 -= rel < zero + kFiveThousandths;
  v.cfar -= ad > atol + rtol * (v4d)((v4l)y & abs_mask);
}

// ordered() distances over eight lanes: same signs differ by their magnitudes' difference,
// opposite signs by their magnitudes' sum (+0 and -0 coincide).
template <class T>
[[gnu::always_inline]] inline void fast_ulp(const typename Lanes<T>::Bits& bx, const typename Lanes<T>::Bits& by,
                                            const typename Lanes<T>::Unsigned& threshold, VectorSums<T>& v) {
  using Unsigned = typename Lanes<T>::Unsigned;
  const Unsigned magnitude = Unsigned{} + Lanes<T>::kMagnitude;
  const Unsigned mx = (Unsigned)bx & magnitude, my = (Unsigned)by & magnitude;
  const Unsigned same = (mx > my ? mx : my) - (mx > my ? my : mx);
  const Unsigned dist = (bx ^ by) < 0 ? mx + my : same;
  v.mulp = dist > v.mulp ? dist : v.mulp;
  v.cbeyond -= dist > threshold;
}

// The formulas of accumulate(), careful_element() and ordered() over blocks of eight elements (n
// a multiple of 8) with no NaN or Inf. Returns false (nothing added) when the block's sums show
// one: the caller redoes it.
template <class T>
[[gnu::always_inline]] inline bool fast_block(const std::byte* a, const std::byte* b, size_t n,
                                              const Params& p, Totals& totals) {
  using L = Lanes<T>;
  using Word = std::remove_reference_t<decltype(typename L::Unsigned{}[0])>;
  const v4d atol = v4d{} + p.atol, rtol = v4d{} + p.rtol;
  // float32 distances stay below 2^32: a larger threshold is never exceeded.
  const typename L::Unsigned threshold =
      typename L::Unsigned{} + static_cast<Word>(std::min<uint64_t>(p.ulp_threshold, static_cast<Word>(-1)));
  VectorSums<T> v;
  for (size_t i = 0; i < n; i += 8) {
    if (i % (kLine / sizeof(T)) == 0) {  // one line of each input, kPrefetchAhead bytes ahead
      __builtin_prefetch(a + i * sizeof(T) + kPrefetchAhead);
      __builtin_prefetch(b + i * sizeof(T) + kPrefetchAhead);
      if constexpr (sizeof(T) == 8) {
        __builtin_prefetch(a + i * sizeof(T) + kPrefetchAhead + kLine);
        __builtin_prefetch(b + i * sizeof(T) + kPrefetchAhead + kLine);
      }
    }
    v4d x0, x1, y0, y1;
    typename L::Bits bx, by;
    L::load8(a + i * sizeof(T), x0, x1, bx);
    L::load8(b + i * sizeof(T), y0, y1, by);
    fast_values(x0, y0, atol, rtol, v);
    fast_values(x1, y1, atol, rtol, v);
    fast_ulp<T>(bx, by, threshold, v);
  }
  BlockSums s;
  s.sxx = lane_sum(v.sxx), s.syy = lane_sum(v.syy);
  if (!std::isfinite(s.sxx) || !std::isfinite(s.syy)) return false;
  s.dot = lane_sum(v.dot), s.sum_abs = lane_sum(v.sabs), s.sum_sq = lane_sum(v.ssq);
  for (int l = 0; l < 4; ++l) {
    s.max_abs = std::max(s.max_abs, v.mabs[l]), s.max_rel = std::max(s.max_rel, v.mrel[l]);
    s.thousandth += v.c1[l], s.five_thousandths += v.c5[l], s.not_close += v.cfar[l];
  }
  for (int l = 0; l < 8; ++l) {
    s.max_ulp = std::max<uint64_t>(s.max_ulp, v.mulp[l]);
    s.ulp_beyond += static_cast<uint64_t>(v.cbeyond[l]);
  }
  totals.add(s);
  return true;
}

using FastFn = bool (*)(const std::byte*, const std::byte*, size_t, const Params&, Totals&);

template <class T> bool fast_baseline(const std::byte* a, const std::byte* b, size_t n, const Params& p, Totals& t) {
  return fast_block<T>(a, b, n, p, t);
}
#if defined(__x86_64__) && defined(__GNUC__)
template <class T> __attribute__((target("avx2,fma")))
bool fast_avx2(const std::byte* a, const std::byte* b, size_t n, const Params& p, Totals& t) {
  return fast_block<T>(a, b, n, p, t);
}
template <class T> __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))
bool fast_avx512(const std::byte* a, const std::byte* b, size_t n, const Params& p, Totals& t) {
  return fast_block<T>(a, b, n, p, t);
}
#endif

// The widest kernel this CPU runs, chosen once.
template <class T>
FastFn fast_kernel() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const FastFn chosen = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
      return &fast_avx512<T>;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &fast_avx2<T>;
    return &fast_baseline<T>;
  }();
  return chosen;
#else
  return &fast_baseline<T>;
#endif
}

template <class T>
void fast_range(const std::byte* a, const std::byte* b, size_t n, const Params& p, Totals& totals) {
  const FastFn kernel = fast_kernel<T>();
  size_t start = 0;
  for (; start + 8 <= n; start += kBlock) {
    const size_t len = std::min(kBlock, (n - start) / 8 * 8);
    if (!kernel(a + start * sizeof(T), b + start * sizeof(T), len, p, totals))
      careful_range<T>(a, b, &widen_into<T>, start, len, p, totals);
    if (len < kBlock) {
      start += len;
      break;
    }
  }
  if (start < n) careful_range<T>(a, b, &widen_into<T>, start, n - start, p, totals);
}

// ---- dispatch on the dtypes -----------------------------------------------------------------

using CarefulFn = void (*)(const std::byte*, const std::byte*, WidenFn, size_t, size_t, const Params&, Totals&);

struct Kernels {
  WidenFn widen;
  CarefulFn careful;  // with this dtype on the a side
};

template <class S> constexpr Kernels kernels_of() { return {&widen_into<S>, &careful_range<S>}; }

// Indexed by DType (dtype.h's order); complex types are read as their real components.
constexpr std::array<Kernels, 15> kKernels = {
    kernels_of<Bool>(),     kernels_of<int8_t>(),  kernels_of<int16_t>(), kernels_of<int32_t>(),
    kernels_of<int64_t>(),  kernels_of<uint8_t>(), kernels_of<uint16_t>(), kernels_of<uint32_t>(),
    kernels_of<uint64_t>(), kernels_of<Half>(),    kernels_of<BF16>(),    kernels_of<float>(),
    kernels_of<double>(),   kernels_of<float>(),   kernels_of<double>(),
};

bool is_complex(DType d) { return d == DType::kComplex64 || d == DType::kComplex128; }

// The stand-in of a complex type: its component type.
DType component(DType d) {
  if (d == DType::kComplex64) return DType::kFloat32;
  if (d == DType::kComplex128) return DType::kFloat64;
  return d;
}

// Square sums in [2^-600, 2^600] need no scaling for the cosine: a product of two elements that
// underflowed lost less than 2^-1074, under 2^-400 of the sums' square roots; none overflowed.
constexpr double kSafeSumLow = 0x1p-600;
constexpr double kSafeSumHigh = 0x1p600;

// One side's bytes and how to widen them.
struct WideningSide {
  const std::byte* data;
  WidenFn widen;
};

// The largest magnitude of a side's first n components. NaN and Inf count as 0: where the cosine is
// computed they sit at the same places on both sides, and msprobe's handle_inf_nan zeroes them.
double largest_magnitude(WideningSide side, uint64_t n) {
  std::array<double, kBlock> x;
  double largest = 0;
  for (uint64_t start = 0; start < n; start += kBlock) {
    const size_t len = static_cast<size_t>(std::min<uint64_t>(kBlock, n - start));
    side.widen(side.data, start, len, x.data());
    for (size_t i = 0; i < len; ++i) {
      if (std::isfinite(x[i])) largest = std::max(largest, std::fabs(x[i]));
    }
  }
  return largest;
}

struct CosineSums {
  double dot = 0, sxx = 0, syy = 0;
};

// Σxy, Σx², Σy² with x and y scaled by 2^ea and 2^eb (exact: powers of two), NaN and Inf as 0.
CosineSums scaled_sums(WideningSide a, int ea, WideningSide b, int eb, uint64_t n) {
  std::array<double, kBlock> x, y;
  Sum dot, sxx, syy;
  for (uint64_t start = 0; start < n; start += kBlock) {
    const size_t len = static_cast<size_t>(std::min<uint64_t>(kBlock, n - start));
    a.widen(a.data, start, len, x.data());
    b.widen(b.data, start, len, y.data());
    double d = 0, xx = 0, yy = 0;
    for (size_t i = 0; i < len; ++i) {
      const double xi = std::isfinite(x[i]) ? std::ldexp(x[i], ea) : 0;
      const double yi = std::isfinite(y[i]) ? std::ldexp(y[i], eb) : 0;
      d += xi * yi, xx += xi * xi, yy += yi * yi;
    }
    dot.add(d), sxx.add(xx), syy.add(yy);
  }
  return {dot.value(), sxx.value(), syy.value()};
}

// msprobe GetCosineSimilarity: N·B / (‖N‖₂‖B‖₂), 1 when both sides are zero, N/A when one side
// is, unsupported for a single element; and ‖N‖₂ / ‖B‖₂. msprobe calls a side zero when its norm
// is ≤ FLOAT_EPSILON, which makes N/A of a tensor of 1e-20s; plumb calls a side zero only when
// every element is 0, and computes every other cosine with each side scaled by its largest
// magnitude first (the totals' unscaled sums where they are safely in range, as they always are
// for float32 and narrower types), so that tiny or huge values neither underflow nor overflow.
void set_cosine(Metrics& m, const Totals& t, WideningSide a, WideningSide b, uint64_t n) {
  CosineSums c{t.dot.value(), t.sxx.value(), t.syy.value()};
  int scale = 0;  // ‖N‖₂ / ‖B‖₂ = √(sxx / syy) · 2^scale
  const auto safe = [](double v) { return v >= kSafeSumLow && v <= kSafeSumHigh; };
  if (!safe(c.sxx) || !safe(c.syy)) {
    const double largest_a = largest_magnitude(a, n), largest_b = largest_magnitude(b, n);
    m.zero_a = largest_a == 0, m.zero_b = largest_b == 0;
    if (m.zero_a || m.zero_b) {
      if (m.zero_a && m.zero_b && m.elements > 1) m.cosine = 1.0;
      return;
    }
    const int ea = -std::ilogb(largest_a), eb = -std::ilogb(largest_b);
    c = scaled_sums(a, ea, b, eb, n);
    scale = eb - ea;
  }
  m.norm_ratio = std::ldexp(std::sqrt(c.sxx / c.syy), scale);
  if (m.elements > 1) m.cosine = c.dot / (std::sqrt(c.sxx) * std::sqrt(c.syy));
}

// The pair's metrics from the totals over `n` compared components.
Metrics finish(const Totals& t, uint64_t n, uint64_t elements, bool scalar) {
  Metrics m;
  m.elements = elements;
  const BlockSums& r = t.rest;
  m.max_ulp = r.max_ulp;
  m.ulp_beyond_share = n ? static_cast<double>(r.ulp_beyond) / static_cast<double>(n) : kUndefined;
  m.not_close = r.not_close;
  m.nan_a = r.nan_a, m.nan_b = r.nan_b, m.inf_a = r.inf_a, m.inf_b = r.inf_b;
  const double dn = static_cast<double>(n);
  if (n == 0 || r.mismatch > 0) {  // msprobe: empty data, or NaN/Inf at different places: N/A
    m.max_abs_err = m.max_rel_err = m.mean_abs_err = m.rmse = m.euclidean = kUndefined;
    m.one_thousandth_ratio = m.five_thousandths_ratio = kUndefined;
    return m;
  }
  m.max_abs_err = r.max_abs;                    // msprobe GetMaxAbsErr: max |N − B|
  m.max_rel_err = r.max_rel;                    // msprobe GetMaxRelativeErr: max RE
  m.mean_abs_err = t.sum_abs.value() / dn;      // mean |N − B|
  m.rmse = std::sqrt(t.sum_sq.value() / dn);    // sqrt(mean (N − B)²)
  m.euclidean = std::sqrt(t.sum_sq.value());    // msprobe GetEuclideanDistance: ‖N − B‖₂
  m.one_thousandth_ratio = static_cast<double>(r.thousandth) / dn;        // msprobe GetErrRatio(0.001)
  m.five_thousandths_ratio = static_cast<double>(r.five_thousandths) / dn;  // GetErrRatio(0.005)
  if (scalar) {  // msprobe: a 0-d tensor has no cosine, Euclidean distance or error ratios
    m.euclidean = m.one_thousandth_ratio = m.five_thousandths_ratio = kUndefined;
  }
  return m;
}

}  // namespace

Metrics compare_tensors(const Tensor& a, const Tensor& b, const MetricOptions& options) {
  const uint64_t elements = a.elements();
  if (b.elements() != elements) {
    throw Error(a.name + " and " + b.name + ": " + std::to_string(elements) + " against " +
                std::to_string(b.elements()) + " elements; compare_tensors needs the same count");
  }
  if (is_complex(a.dtype) != is_complex(b.dtype)) {
    throw Error(a.name + " is " + std::string(dtype_name(a.dtype)) + " and " + b.name + " is " +
                std::string(dtype_name(b.dtype)) +
                ": plumb compares a complex tensor only with a complex one (as pairs of reals)");
  }
  const auto [rtol_default, atol_default] = assert_close_tolerances(a.dtype);
  const auto [rtol_b, atol_b] = assert_close_tolerances(b.dtype);
  Params p;
  p.rtol = options.rtol.value_or(std::max(rtol_default, rtol_b));  // torch: the loosest of the two
  p.atol = options.atol.value_or(std::max(atol_default, atol_b));
  p.ulp_threshold = options.ulp_threshold;

  const DType da = component(a.dtype), db = component(b.dtype);
  const uint64_t n = is_complex(a.dtype) ? 2 * elements : elements;
  // Components [first, first + len) into `totals`: the vector path for same-dtype float32/64.
  auto range = [&](uint64_t first, uint64_t len, Totals& totals) {
    if (da == db && da == DType::kFloat32) {
      fast_range<float>(a.data + first * sizeof(float), b.data + first * sizeof(float), len, p, totals);
    } else if (da == db && da == DType::kFloat64) {
      fast_range<double>(a.data + first * sizeof(double), b.data + first * sizeof(double), len, p, totals);
    } else {
      kKernels[static_cast<size_t>(da)].careful(a.data, b.data, kKernels[static_cast<size_t>(db)].widen, first,
                                                len, p, totals);
    }
  };
  Totals totals;
  const uint64_t parts = options.threads > 1 && n >= kThreadedMinimum ? static_cast<uint64_t>(options.threads) : 1;
  if (parts == 1) {
    range(0, n, totals);
  } else {  // contiguous parts of whole blocks, merged in order
    const uint64_t step = (n / parts + kBlock - 1) / kBlock * kBlock;
    std::vector<Totals> part(parts);
    std::vector<std::thread> workers;
    for (uint64_t i = 0; i < parts && i * step < n; ++i) {
      workers.emplace_back([&, i] { range(i * step, std::min(step, n - i * step), part[i]); });
    }
    for (std::thread& w : workers) w.join();
    for (const Totals& t : part) totals.add(t);
  }
  Metrics m = finish(totals, n, elements, a.shape.empty());
  if (n > 0 && totals.rest.mismatch == 0) {
    set_cosine(m, totals, {a.data, kKernels[static_cast<size_t>(da)].widen},
               {b.data, kKernels[static_cast<size_t>(db)].widen}, n);
  }
  m.rtol = p.rtol, m.atol = p.atol;
  return m;
}

namespace {

// Chan, Golub and LeVeque's pairwise update of count, mean and M2 (sum of squared deviations),
// for merging one block's statistics into the running ones.
struct Moments {
  double count = 0, mean = 0, m2 = 0;
  void merge(double n, double mean_b, double m2_b) {
    if (n == 0) return;
    const double total = count + n, delta = mean_b - mean;
    mean += delta * n / total;
    m2 += m2_b + delta * delta * count * n / total;
    count = total;
  }
};

}  // namespace

// min, max, mean, std (population: numpy's ddof=0) and L2 norm over the finite elements; NaN and
// ±Inf counted. Complex tensors: over their real components.
TensorStats tensor_stats(const Tensor& t) {
  TensorStats stats;
  stats.elements = t.elements();
  const DType d = component(t.dtype);
  const uint64_t n = is_complex(t.dtype) ? 2 * stats.elements : stats.elements;
  const WidenFn widen = kKernels[static_cast<size_t>(d)].widen;
  std::array<double, kBlock> x;
  Moments moments;
  Sum squares;
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (uint64_t start = 0; start < n; start += kBlock) {
    const size_t len = static_cast<size_t>(std::min<uint64_t>(kBlock, n - start));
    widen(t.data, start, len, x.data());
    double sum = 0, sq = 0;
    size_t finite = 0;
    for (size_t i = 0; i < len; ++i) {
      const double v = x[i];
      stats.nan += std::isnan(v), stats.inf += std::isinf(v);
      if (!std::isfinite(v)) continue;
      ++finite, sum += v, sq += v * v;
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
    if (finite == 0) continue;
    const double mean = sum / static_cast<double>(finite);
    double m2 = 0;
    for (size_t i = 0; i < len; ++i)
      if (std::isfinite(x[i])) m2 += (x[i] - mean) * (x[i] - mean);
    moments.merge(static_cast<double>(finite), mean, m2);
    squares.add(sq);
  }
  if (moments.count == 0) return stats;
  stats.min = lo, stats.max = hi, stats.mean = moments.mean;
  stats.std = std::sqrt(moments.m2 / moments.count);
  stats.l2norm = std::sqrt(squares.value());
  return stats;
}

}  // namespace plumb::precision
