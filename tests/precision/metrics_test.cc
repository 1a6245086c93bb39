// The metrics on worked examples checked by hand (every number derived in the comment beside
// it), the refusals' exact text, the vector fast path against the careful path, and every metric
// against a numpy computation of the same formulas on the same bytes (/usr/bin/python3, float64).
#include "precision/metrics.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "support/subprocess.h"

namespace plumb::precision {
namespace {

constexpr double kEps = 2.220446049250313e-16;  // msprobe's FLOAT_EPSILON
constexpr float kNaN = __builtin_nanf("");
constexpr float kInf = __builtin_huge_valf();

template <class T>
Tensor make(DType dtype, const std::vector<T>& values, std::vector<int64_t> shape = {}, std::string name = "t") {
  auto bytes = std::make_shared<std::vector<std::byte>>(values.size() * sizeof(T));
  std::memcpy(bytes->data(), values.data(), bytes->size());
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = shape.empty() ? std::vector<int64_t>{static_cast<int64_t>(values.size())} : shape;
  t.data = bytes->data();
  t.owner = bytes;
  return t;
}

Tensor f32(const std::vector<float>& v, std::string name = "t") { return make(DType::kFloat32, v, {}, std::move(name)); }
Tensor f64(const std::vector<double>& v) { return make(DType::kFloat64, v); }

TEST(Metrics, WorkedExampleFloat32) {
  // a = [1, 2, 3, 4], b = [1, 2, 3, 5]: one element off by 1.
  const Metrics m = compare_tensors(f32({1, 2, 3, 4}), f32({1, 2, 3, 5}));
  EXPECT_EQ(m.elements, 4u);
  EXPECT_DOUBLE_EQ(m.cosine, 34 / (std::sqrt(30.0) * std::sqrt(39.0)));  // a·b = 34, ‖a‖² 30, ‖b‖² 39
  EXPECT_NEAR(m.cosine, 0.99400, 1e-5);
  EXPECT_EQ(m.max_abs_err, 1.0);
  EXPECT_EQ(m.max_rel_err, 0.2);          // |4 − 5| / 5
  EXPECT_EQ(m.mean_abs_err, 0.25);        // 1 / 4
  EXPECT_EQ(m.rmse, 0.5);                 // sqrt(1 / 4)
  EXPECT_EQ(m.euclidean, 1.0);
  EXPECT_EQ(m.one_thousandth_ratio, 0.75);  // three elements with RE 0 < 0.001
  EXPECT_EQ(m.five_thousandths_ratio, 0.75);
  EXPECT_EQ(m.max_ulp, 0x200000u);  // 4.0f = 0x40800000, 5.0f = 0x40a00000
  EXPECT_EQ(m.ulp_beyond_share, 0.25);
  EXPECT_EQ(m.not_close, 1u);  // float32: rtol 1.3e-6, atol 1e-5
  EXPECT_EQ(m.rtol, 1.3e-6);
  EXPECT_EQ(m.atol, 1e-5);
  EXPECT_EQ(m.nan_a + m.nan_b + m.inf_a + m.inf_b, 0u);
}

TEST(Metrics, ZeroInTheReferenceGetsMsprobesEpsilon) {
  // b = 0 adds FLOAT_EPSILON to both sides: RE = |(1e-3 + eps) − eps| / eps; 0 against 0 is RE 0.
  const Metrics m = compare_tensors(f64({1e-3, 0, 2}), f64({0, 0, 2}));
  EXPECT_EQ(m.max_rel_err, std::fabs((1e-3 + kEps) - kEps) / kEps);
  EXPECT_NEAR(m.max_rel_err, 4.5036e12, 1e9);
  EXPECT_DOUBLE_EQ(m.one_thousandth_ratio, 2.0 / 3);
  EXPECT_EQ(m.max_abs_err, 1e-3);
  EXPECT_DOUBLE_EQ(m.cosine, 4 / (std::sqrt(4 + 1e-6) * 2));
}

TEST(Metrics, NanAndInfAtTheSamePlacesBecomeZero) {
  // msprobe handle_inf_nan: same NaN and Inf places → 0 on both sides; inf and −inf both count as Inf.
  const Metrics m = compare_tensors(f32({kNaN, kInf, 1, 2}), f32({kNaN, -kInf, 1, 2.5}));
  EXPECT_EQ(m.nan_a, 1u);
  EXPECT_EQ(m.nan_b, 1u);
  EXPECT_EQ(m.inf_a, 1u);
  EXPECT_EQ(m.inf_b, 1u);
  EXPECT_EQ(m.max_abs_err, 0.5);
  EXPECT_EQ(m.mean_abs_err, 0.125);
  EXPECT_DOUBLE_EQ(m.cosine, 6 / (std::sqrt(5.0) * std::sqrt(7.25)));  // [0,0,1,2]·[0,0,1,2.5]
  EXPECT_EQ(m.one_thousandth_ratio, 0.75);  // the zeroed pairs have RE 0
  // assert_close: NaN is never close, inf is not −inf, 2 is not 2.5.
  EXPECT_EQ(m.not_close, 3u);
  // ULP: NaN with NaN is 0; +inf (0x7f800000) to −inf is 2·0x7f800000.
  EXPECT_EQ(m.max_ulp, 2u * 0x7f800000u);
  EXPECT_EQ(m.ulp_beyond_share, 0.5);
}

TEST(Metrics, NanAgainstANumberLeavesEveryMsprobeMetricUndefined) {
  const Metrics m = compare_tensors(f32({kNaN, 1, 2}), f32({0, 1, 2}));
  EXPECT_TRUE(std::isnan(m.cosine));
  EXPECT_TRUE(std::isnan(m.max_abs_err));
  EXPECT_TRUE(std::isnan(m.max_rel_err));
  EXPECT_TRUE(std::isnan(m.mean_abs_err));
  EXPECT_TRUE(std::isnan(m.rmse));
  EXPECT_TRUE(std::isnan(m.euclidean));
  EXPECT_TRUE(std::isnan(m.one_thousandth_ratio));
  EXPECT_TRUE(std::isnan(m.five_thousandths_ratio));
  EXPECT_EQ(m.nan_a, 1u);
  EXPECT_EQ(m.not_close, 1u);
  EXPECT_DOUBLE_EQ(m.ulp_beyond_share, 1.0 / 3);  // NaN against a number is beyond any threshold
  EXPECT_EQ(m.max_ulp, 0u);
}

TEST(Metrics, CosineOfZeroTensors) {
  const Metrics both = compare_tensors(f32({0, 0}), f32({0, 0}));
  EXPECT_EQ(both.cosine, 1.0);  // msprobe: both sides zero is a cosine of 1
  EXPECT_TRUE(both.zero_a && both.zero_b);
  const Metrics one_side = compare_tensors(f32({1, 0}), f32({0, 0}));
  EXPECT_TRUE(std::isnan(one_side.cosine));  // msprobe: "All the data is Zero in Bench dump data"
  EXPECT_FALSE(one_side.zero_a);
  EXPECT_TRUE(one_side.zero_b);
  EXPECT_TRUE(std::isnan(one_side.norm_ratio));
  EXPECT_EQ(one_side.max_abs_err, 1.0);
  // NaN at the same place is set to 0 first: A is then all zero, B is not.
  const Metrics nan_zero = compare_tensors(f32({kNaN, 0, 0}), f32({kNaN, 1, 0}));
  EXPECT_TRUE(nan_zero.zero_a);
  EXPECT_FALSE(nan_zero.zero_b);
  // A float64 side of subnormals is not zero: 5e-324² underflows to 0, the scaled sums do not.
  const Metrics subnormal = compare_tensors(f64({5e-324, 0, 1e-310}), f64({5e-324, 0, 1e-310}));
  EXPECT_FALSE(subnormal.zero_a || subnormal.zero_b);
  EXPECT_DOUBLE_EQ(subnormal.cosine, 1.0);
  EXPECT_EQ(subnormal.norm_ratio, 1.0);
}

// The cosine of A = B × 1e-30 is 1: each side is scaled by its largest magnitude before the sums
// (issue 28: msprobe's test of a norm ≤ ε made it N/A, and the pair passed).
TEST(Metrics, CosineIsComputedWithoutUnderflowOrOverflow) {
  const std::vector<double> ref = {0.5, -0.25, 0.125, 1, -0.75};
  auto scaled = [&](double k) {
    std::vector<double> v;
    for (double x : ref) v.push_back(x * k);
    return v;
  };
  std::vector<float> tiny32;
  for (double x : scaled(1e-30)) tiny32.push_back(static_cast<float>(x));
  std::vector<float> ref32(ref.begin(), ref.end());
  const Metrics f = compare_tensors(f32(tiny32), f32(ref32));  // float32: squares near 1e-61, in range
  EXPECT_NEAR(f.cosine, 1.0, 1e-12);
  EXPECT_NEAR(f.norm_ratio, 1e-30, 1e-36);
  EXPECT_FALSE(f.zero_a || f.zero_b);
  const Metrics small = compare_tensors(f64(scaled(1e-200)), f64(ref));  // squares underflow to 0
  EXPECT_NEAR(small.cosine, 1.0, 1e-15);
  EXPECT_NEAR(small.norm_ratio, 1e-200, 1e-214);
  const Metrics large = compare_tensors(f64(scaled(1e200)), f64(ref));  // squares overflow to inf
  EXPECT_NEAR(large.cosine, 1.0, 1e-15);
  EXPECT_NEAR(large.norm_ratio, 1e200, 1e186);
  const Metrics opposite = compare_tensors(f64(scaled(-1e-200)), f64(scaled(1e200)));
  EXPECT_NEAR(opposite.cosine, -1.0, 1e-15);
  // Two tensors of tiny noise: a real cosine (here orthogonal: 0), where msprobe would say 1.
  const Metrics noise = compare_tensors(f32({1e-20f, 0}), f32({0, 1e-20f}));
  EXPECT_EQ(noise.cosine, 0.0);
  EXPECT_EQ(noise.norm_ratio, 1.0);
}

TEST(Metrics, ScalarsAndSingleElementsFollowMsprobe) {
  const Metrics scalar = compare_tensors(make(DType::kFloat32, std::vector<float>{2}, {}), f32({1.5f}));
  EXPECT_EQ(scalar.elements, 1u);
  EXPECT_TRUE(std::isnan(scalar.cosine));  // a single element has no cosine
  EXPECT_EQ(scalar.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(scalar.max_rel_err, 1.0 / 3);
  Tensor zero_d = f32({2});
  zero_d.shape = {};  // 0-d: no Euclidean distance or ratios either
  const Metrics m = compare_tensors(zero_d, f32({1.5f}));
  EXPECT_TRUE(std::isnan(m.euclidean));
  EXPECT_TRUE(std::isnan(m.one_thousandth_ratio));
  EXPECT_EQ(m.max_abs_err, 0.5);
}

TEST(Metrics, EmptyTensorsHaveNoMetrics) {
  Tensor a = f32({}), b = f32({});
  a.shape = b.shape = {0, 3};
  const Metrics m = compare_tensors(a, b);
  EXPECT_EQ(m.elements, 0u);
  EXPECT_TRUE(std::isnan(m.max_abs_err));
  EXPECT_TRUE(std::isnan(m.ulp_beyond_share));
}

TEST(Metrics, Float16ComparedAsStored) {
  // 1.0 (0x3c00) against the next half up, 1 + 2^-10 (0x3c01); 0 against the smallest subnormal.
  const Tensor a = make(DType::kFloat16, std::vector<uint16_t>{0x3c00, 0x0000});
  const Tensor b = make(DType::kFloat16, std::vector<uint16_t>{0x3c01, 0x0001});
  const Metrics m = compare_tensors(a, b);
  EXPECT_EQ(m.max_ulp, 1u);
  EXPECT_EQ(m.ulp_beyond_share, 0.0);
  EXPECT_EQ(m.max_abs_err, std::ldexp(1.0, -10));
  EXPECT_EQ(m.max_rel_err, 1.0);  // |0 − 2^-24| / 2^-24
  EXPECT_EQ(m.rtol, 0.001);
  EXPECT_EQ(m.atol, 1e-5);
  EXPECT_EQ(m.not_close, 0u);  // 2^-10 ≤ 1e-5 + 1e-3·(1 + 2^-10)
}

TEST(Metrics, MixedDtypesCountUlpInAsType) {
  // bfloat16 1.0 (0x3f80) against float32 1.01: 1.01 rounds to bfloat16 1.0078125 (0x3f81): 1 ULP.
  const Metrics m = compare_tensors(make(DType::kBFloat16, std::vector<uint16_t>{0x3f80}), f32({1.01f}));
  EXPECT_EQ(m.max_ulp, 1u);
  EXPECT_DOUBLE_EQ(m.max_abs_err, static_cast<double>(1.01f) - 1);
  EXPECT_EQ(m.rtol, 0.016);  // the looser of bfloat16's and float32's
  // float16 0x3c00 (1.0) against float64 1 + 3·2^-11: rounds to even, 1 + 2^-9 (0x3c02): 2 ULP.
  const Metrics h = compare_tensors(make(DType::kFloat16, std::vector<uint16_t>{0x3c00}),
                                    f64({1 + 3 * std::ldexp(1.0, -11)}));
  EXPECT_EQ(h.max_ulp, 2u);
  // int32 against int64: the ULP distance of integers is the difference.
  const Metrics i = compare_tensors(make(DType::kInt32, std::vector<int32_t>{1, 5}),
                                    make(DType::kInt64, std::vector<int64_t>{1, 2}));
  EXPECT_EQ(i.max_ulp, 3u);
  EXPECT_EQ(i.max_abs_err, 3.0);
  EXPECT_EQ(i.not_close, 1u);  // integers: rtol 0, atol 0
  const Metrics flag = compare_tensors(make(DType::kBool, std::vector<uint8_t>{1, 0}),
                                       make(DType::kBool, std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(flag.max_abs_err, 1.0);
  EXPECT_EQ(flag.euclidean, 1.0);
}

TEST(Metrics, ComplexAsPairsOfReals) {
  // (1+2i, 3−1i) against (1+2i, 3+1i): components [1,2,3,−1] and [1,2,3,1].
  const Tensor a = make(DType::kComplex64, std::vector<float>{1, 2, 3, -1}, {2});
  const Tensor b = make(DType::kComplex64, std::vector<float>{1, 2, 3, 1}, {2});
  const Metrics m = compare_tensors(a, b);
  EXPECT_EQ(m.elements, 2u);
  EXPECT_EQ(m.max_abs_err, 2.0);
  EXPECT_EQ(m.euclidean, 2.0);
  EXPECT_EQ(m.mean_abs_err, 0.5);  // over the four components
  EXPECT_DOUBLE_EQ(m.cosine, 13.0 / 15);
  EXPECT_EQ(m.rtol, 1.3e-6);
}

TEST(Metrics, Refusals) {
  EXPECT_EQ(test::error_message([] {
              compare_tensors(make(DType::kComplex64, std::vector<float>{1, 2}, {1}, "x.npy"), f32({1}, "y.npy"));
            }),
            "x.npy is complex64 and y.npy is float32: plumb compares a complex tensor only with a "
            "complex one (as pairs of reals)");
  EXPECT_EQ(test::error_message([] { compare_tensors(f32({1, 2}, "x.npy"), f32({1}, "y.npy")); }),
            "x.npy and y.npy: 2 against 1 elements; compare_tensors needs the same count");
}

TEST(Metrics, OptionsSetTolerancesAndUlpThreshold) {
  MetricOptions options;
  options.rtol = 0.25, options.atol = 0, options.ulp_threshold = 0x200000;
  const Metrics m = compare_tensors(f32({1, 2, 3, 4}), f32({1, 2, 3, 5}), options);
  EXPECT_EQ(m.not_close, 0u);  // 1 ≤ 0.25·5
  EXPECT_EQ(m.ulp_beyond_share, 0.0);  // exactly the threshold is not beyond it
}

// Random normal values: b = a·(1 + noise) with exact matches and zeros mixed in.
std::vector<float> noisy(const std::vector<float>& a, unsigned seed, double scale) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> noise(0, scale);
  std::vector<float> b(a.size());
  for (size_t i = 0; i < a.size(); ++i) b[i] = static_cast<float>(a[i] * (1 + noise(gen)));
  for (size_t i = 0; i < a.size(); i += 97) b[i] = a[i];
  for (size_t i = 5; i < a.size(); i += 89) b[i] = 0;
  return b;
}

std::vector<float> normal(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0, 3);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

void expect_same(const Metrics& x, const Metrics& y) {
  auto near = [](double p, double q) { return (std::isnan(p) && std::isnan(q)) || std::fabs(p - q) <= 1e-12 * std::fabs(q); };
  EXPECT_TRUE(near(x.cosine, y.cosine)) << x.cosine << " " << y.cosine;
  EXPECT_EQ(x.max_abs_err, y.max_abs_err);
  EXPECT_EQ(x.max_rel_err, y.max_rel_err);
  EXPECT_TRUE(near(x.mean_abs_err, y.mean_abs_err));
  EXPECT_TRUE(near(x.rmse, y.rmse));
  EXPECT_EQ(x.one_thousandth_ratio, y.one_thousandth_ratio);
  EXPECT_EQ(x.five_thousandths_ratio, y.five_thousandths_ratio);
  EXPECT_EQ(x.max_ulp, y.max_ulp);
  EXPECT_EQ(x.ulp_beyond_share, y.ulp_beyond_share);
  EXPECT_EQ(x.not_close, y.not_close);
  EXPECT_EQ(x.nan_a, y.nan_a);
  EXPECT_EQ(x.inf_b, y.inf_b);
}

TEST(Metrics, VectorPathAgreesWithTheCarefulPath) {
  // float32 against float32 takes the 8-lane blocks; float32 against the same values as float64
  // takes the per-element path. A NaN pair and an Inf pair in the second block send that block
  // back to the careful path; the odd length leaves a tail.
  std::vector<float> a = normal(10007, 1), b = noisy(a, 2, 1e-3);
  a[3000] = b[3000] = std::nanf("");
  a[3001] = b[3001] = HUGE_VALF;
  std::vector<double> b64(b.begin(), b.end());
  MetricOptions options;
  options.rtol = 1.3e-6, options.atol = 1e-5;  // float32's, for both
  expect_same(compare_tensors(f32(a), f32(b), options), compare_tensors(f32(a), f64(b64), options));
}

TEST(Metrics, ThreadsAgreeWithOneThread) {
  // 2^20 + 13 elements over three threads (parts of whole blocks, the last one short), with a
  // NaN pair in the second part; float64 against float32 takes the careful path in parts too.
  std::vector<float> a = normal((1 << 20) + 13, 7), b = noisy(a, 8, 1e-3);
  a[400000] = b[400000] = std::nanf("");
  MetricOptions three;
  three.threads = 3;
  expect_same(compare_tensors(f32(a), f32(b), three), compare_tensors(f32(a), f32(b)));
  std::vector<double> b64(b.begin(), b.end());
  expect_same(compare_tensors(f32(a), f64(b64), three), compare_tensors(f32(a), f64(b64)));
}

TEST(TensorStats, WorkedExample) {
  // Finite elements 1, 2, 3: mean 2, population std sqrt(2/3), L2 norm sqrt(14).
  const TensorStats s = tensor_stats(f32({1, 2, kNaN, kInf, 3, -kInf}));
  EXPECT_EQ(s.elements, 6u);
  EXPECT_EQ(s.nan, 1u);
  EXPECT_EQ(s.inf, 2u);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 3.0);
  EXPECT_EQ(s.mean, 2.0);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(2.0 / 3));
  EXPECT_DOUBLE_EQ(s.l2norm, std::sqrt(14.0));
  const TensorStats none = tensor_stats(f32({kNaN}));
  EXPECT_TRUE(std::isnan(none.mean));
  EXPECT_EQ(none.nan, 1u);
}

// ---- numpy --------------------------------------------------------------------------------

// The reference: msprobe's formulas (npy_compare.py) and the rest, written plainly in numpy on
// float64 copies of the arrays. Prints "name value" lines.
constexpr const char* kReference = R"PY(
import sys
import numpy as np
a_path, a_dtype, b_path, b_dtype, rtol, atol, ulp_threshold, scalar = sys.argv[1:9]
rtol, atol, ulp_threshold, scalar = float(rtol), float(atol), int(ulp_threshold), scalar == "1"
EPS = np.finfo(float).eps

def load(path, dtype):
    if dtype == "bfloat16":
        bits = np.fromfile(path, "<u2")
        return (bits.astype("<u4") << 16).view("<f4").astype(np.float64), bits, 16
    raw = np.fromfile(path, "<" + np.dtype(dtype).str[1:])
    width = raw.dtype.itemsize * 8
    bits = raw.view("<u%d" % raw.dtype.itemsize) if raw.dtype.kind == "f" else None
    return raw.astype(np.float64), bits, width

x, xbits, width = load(a_path, a_dtype)
y, _, _ = load(b_path, b_dtype)
out = {}
out["nan_a"], out["nan_b"] = np.isnan(x).sum(), np.isnan(y).sum()
out["inf_a"], out["inf_b"] = np.isinf(x).sum(), np.isinf(y).sum()
with np.errstate(invalid="ignore", over="ignore"):
    close = (x == y) | (np.isfinite(x) & np.isfinite(y) & (np.abs(x - y) <= atol + rtol * np.abs(y)))
out["not_close"] = (~close).sum()

def ordered(bits, width):
    bits = bits.astype(np.uint64)
    sign = np.uint64(1) << np.uint64(width - 1)
    mag = (bits & (sign - np.uint64(1))).astype(object)
    return np.where((bits & sign) != 0, -mag, mag)

nan_any = np.isnan(x) | np.isnan(y)
if xbits is None:
    dist = np.ceil(np.abs(x - y)).astype(object)
elif a_dtype == "bfloat16":  # numpy has no bfloat16: the test pairs it with bfloat16 only (exact)
    yb = (y.astype(np.float32).view("<u4") >> 16).astype("<u2")
    dist = np.abs(ordered(xbits, width) - ordered(yb, width))
else:
    yb = y.astype(a_dtype).view(xbits.dtype)  # b rounded to a's type
    dist = np.abs(ordered(xbits, width) - ordered(yb, width))
ok = ~nan_any
out["max_ulp"] = max(dist[ok]) if ok.any() else 0
out["ulp_beyond_share"] = ((dist[ok] > ulp_threshold).sum() + (np.isnan(x) != np.isnan(y)).sum()) / x.size

xi, yi, xn, yn = np.isinf(x), np.isinf(y), np.isnan(x), np.isnan(y)
undefined = False
if xi.any() or yi.any() or xn.any() or yn.any():
    if np.array_equal(xi, yi) and np.array_equal(xn, yn):
        x[xi | xn] = 0
        y[yi | yn] = 0
    else:
        undefined = True
names = ["cosine", "max_abs_err", "max_rel_err", "mean_abs_err", "rmse", "euclidean",
         "one_thousandth_ratio", "five_thousandths_ratio"]
if undefined:
    for n in names:
        out[n] = float("nan")
else:
    xp, yp = x.copy(), y.copy()
    zero = y == 0
    yp[zero] += EPS
    xp[zero] += EPS
    rel = np.abs(np.divide(xp - yp, yp))
    d = x - y
    # plumb's cosine (docs/precision.md): each side scaled by its largest magnitude first; a
    # side is zero only when every element is.
    ma, mb = np.abs(x).max(), np.abs(y).max()
    if x.size == 1 or (ma == 0) != (mb == 0):
        out["cosine"] = float("nan")
    elif ma == 0:
        out["cosine"] = 1.0
    else:
        xs, ys = x / ma, y / mb
        out["cosine"] = xs.dot(ys) / (np.linalg.norm(xs) * np.linalg.norm(ys))
    out["max_abs_err"] = np.max(np.abs(d))
    out["max_rel_err"] = np.max(rel)
    out["mean_abs_err"] = np.mean(np.abs(d))
    out["rmse"] = np.sqrt(np.mean(d * d))
    out["euclidean"] = np.linalg.norm(d, ord=2)
    out["one_thousandth_ratio"] = np.sum(rel < 0.001) / rel.size
    out["five_thousandths_ratio"] = np.sum(rel < 0.005) / rel.size
    if scalar:
        out["euclidean"] = out["one_thousandth_ratio"] = out["five_thousandths_ratio"] = float("nan")

a_all, _, _ = load(a_path, a_dtype)
f = a_all[np.isfinite(a_all)]
out["stats_nan"], out["stats_inf"] = np.isnan(a_all).sum(), np.isinf(a_all).sum()
if f.size:
    out["stats_min"], out["stats_max"], out["stats_mean"] = f.min(), f.max(), f.mean()
    out["stats_std"], out["stats_l2norm"] = f.std(), np.linalg.norm(f)
for k, v in out.items():
    print(k, repr(float(v)) if isinstance(v, (float, np.floating)) else int(v))
)PY";

std::string fmt_double(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

bool numpy_available() {
  return test::run_command("/usr/bin/python3 -c 'import numpy' 2>/dev/null").exit_code == 0;
}

template <class T>
std::string write_raw(const std::string& dir, const std::string& name, const std::vector<T>& v) {
  const std::string path = dir + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  return path;
}

std::map<std::string, double> numpy_reference(const std::string& dir, const std::string& a_path,
                                              std::string_view a_dtype, const std::string& b_path,
                                              std::string_view b_dtype, const Metrics& m, bool scalar) {
  test::write_file(dir + "/reference.py", kReference);
  const std::string command = "/usr/bin/python3 " + dir + "/reference.py " + a_path + " " +
                              std::string(a_dtype) + " " + b_path + " " + std::string(b_dtype) + " " +
                              fmt_double(m.rtol) + " " + fmt_double(m.atol) + " 1 " + (scalar ? "1" : "0");
  const test::Run run = test::run_command(command);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::map<std::string, double> values;
  std::istringstream lines(run.out);
  std::string key, value;
  while (lines >> key >> value) values[key] = std::stod(value);
  return values;
}

void expect_agrees(const std::string& what, double ours, const std::map<std::string, double>& ref) {
  ASSERT_TRUE(ref.count(what)) << what << " missing from numpy's output";
  const double theirs = ref.at(what);
  if (std::isnan(theirs) || std::isnan(ours)) {
    EXPECT_TRUE(std::isnan(theirs) && std::isnan(ours)) << what << ": plumb " << ours << ", numpy " << theirs;
    return;
  }
  EXPECT_LE(std::fabs(ours - theirs), 1e-12 * std::fabs(theirs)) << what << ": plumb " << ours << ", numpy " << theirs;
}

// Writes both tensors' bytes, runs numpy on them and checks every metric and a's statistics.
void check_against_numpy(const std::string& name, const Tensor& a, const Tensor& b) {
  const std::string dir = test::temp_dir("metrics_numpy_" + name);
  auto write = [&](const Tensor& t, const std::string& file) {
    std::vector<std::byte> v(t.data, t.data + t.bytes());
    return write_raw(dir, file, v);
  };
  const Metrics m = compare_tensors(a, b);
  const auto ref = numpy_reference(dir, write(a, "a.bin"), dtype_name(a.dtype), write(b, "b.bin"),
                                   dtype_name(b.dtype), m, a.shape.empty());
  SCOPED_TRACE(name);
  expect_agrees("cosine", m.cosine, ref);
  expect_agrees("max_abs_err", m.max_abs_err, ref);
  expect_agrees("max_rel_err", m.max_rel_err, ref);
  expect_agrees("mean_abs_err", m.mean_abs_err, ref);
  expect_agrees("rmse", m.rmse, ref);
  expect_agrees("euclidean", m.euclidean, ref);
  expect_agrees("one_thousandth_ratio", m.one_thousandth_ratio, ref);
  expect_agrees("five_thousandths_ratio", m.five_thousandths_ratio, ref);
  expect_agrees("max_ulp", static_cast<double>(m.max_ulp), ref);
  expect_agrees("ulp_beyond_share", m.ulp_beyond_share, ref);
  expect_agrees("not_close", static_cast<double>(m.not_close), ref);
  expect_agrees("nan_a", static_cast<double>(m.nan_a), ref);
  expect_agrees("nan_b", static_cast<double>(m.nan_b), ref);
  expect_agrees("inf_a", static_cast<double>(m.inf_a), ref);
  expect_agrees("inf_b", static_cast<double>(m.inf_b), ref);
  const TensorStats s = tensor_stats(a);
  expect_agrees("stats_nan", static_cast<double>(s.nan), ref);
  expect_agrees("stats_inf", static_cast<double>(s.inf), ref);
  expect_agrees("stats_min", s.min, ref);
  expect_agrees("stats_max", s.max, ref);
  expect_agrees("stats_mean", s.mean, ref);
  expect_agrees("stats_std", s.std, ref);
  expect_agrees("stats_l2norm", s.l2norm, ref);
}

// Random 16-bit float patterns (sign, exponent in [lo, hi], any mantissa) and their neighbours a
// few ULP away, with zeros and exact matches: float16 and bfloat16 data as stored.
std::pair<std::vector<uint16_t>, std::vector<uint16_t>> bits16(size_t n, int mantissa_bits, int lo, int hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> exponent(lo, hi), mantissa(0, (1 << mantissa_bits) - 1), step(-3, 3), sign(0, 1);
  std::vector<uint16_t> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<uint16_t>((sign(gen) << 15) | (exponent(gen) << mantissa_bits) | mantissa(gen));
    b[i] = static_cast<uint16_t>(a[i] + step(gen));
  }
  for (size_t i = 7; i < n; i += 50) b[i] = 0;
  for (size_t i = 11; i < n; i += 70) a[i] = 0;
  return {a, b};
}

TEST(MetricsNumpy, AgreesToOnePartInATrillion) {
  if (!numpy_available()) GTEST_SKIP() << "/usr/bin/python3 has no numpy (apt-get install python3-numpy)";
  // float32 (the vector path): noise, zeros in b, a NaN pair and an inf/−inf pair at the same places.
  std::vector<float> a = normal(10007, 3), b = noisy(a, 4, 2e-3);
  a[10] = b[10] = std::nanf("");
  a[20] = HUGE_VALF, b[20] = -HUGE_VALF;
  check_against_numpy("float32", f32(a), f32(b));
  // float32 with a NaN against a number: every msprobe metric N/A.
  std::vector<float> c = b;
  c[30] = std::nanf("");
  check_against_numpy("float32_nan_mismatch", f32(a), f32(c));
  // float64 with zeros and infinities.
  std::vector<double> a64(a.begin(), a.end()), b64(b.begin(), b.end());
  a64[40] = b64[40] = -HUGE_VAL;
  check_against_numpy("float64", f64(a64), f64(b64));
  // float16 and bfloat16 as stored, a few ULP apart.
  auto [ha, hb] = bits16(5003, 10, 5, 20, 5);
  ha[100] = hb[100] = 0x7e00;  // NaN
  ha[200] = hb[200] = 0xfc00;  // -inf
  check_against_numpy("float16", make(DType::kFloat16, ha), make(DType::kFloat16, hb));
  auto [ba, bb] = bits16(5003, 7, 100, 140, 6);
  check_against_numpy("bfloat16", make(DType::kBFloat16, ba), make(DType::kBFloat16, bb));
  // Mixed: float16 against float32 (ULP in float16), int16 against float32.
  std::vector<float> hb32(hb.size());
  for (size_t i = 0; i < hb.size(); ++i) hb32[i] = static_cast<float>(half_to_double(hb[i]) * 1.0007);
  check_against_numpy("float16_float32", make(DType::kFloat16, ha), f32(hb32));
  std::vector<int16_t> ints(a.size());
  for (size_t i = 0; i < a.size(); ++i) ints[i] = static_cast<int16_t>(std::lround(std::isfinite(a[i]) ? a[i] * 100 : 0));
  std::vector<float> near_ints(ints.begin(), ints.end());
  for (size_t i = 0; i < near_ints.size(); i += 3) near_ints[i] += 0.25f;
  check_against_numpy("int16_float32", make(DType::kInt16, ints), f32(near_ints));
}

}  // namespace
}  // namespace plumb::precision
