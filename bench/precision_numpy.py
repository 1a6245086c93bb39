"""The peer of bench/precision_compare: the metrics of `plumb precision compare` computed with
numpy, as one would write them for two large raw float32 files: both mapped with np.memmap,
processed in chunks of 2**20 elements (so that the float64 temporaries fit in memory and in the
allocator's reuse) with float64 arithmetic: msprobe's formulas (Ascend/msprobe
core/compare/npy_compare.py) plus mean absolute error, RMSE, the ULP distance and assert_close's
not-close count.

    /usr/bin/python3 bench/precision_numpy.py A.bin B.bin

Prints each metric as "name value", then "cpu_seconds C" and "seconds S": the CPU and wall time
from before mapping the files to after the last metric (the interpreter's start and numpy's import
are not counted).
"""
import sys
import time

import numpy as np

CHUNK = 1 << 20  # the fastest here: 2**24 is 7x slower (its temporaries are fresh page-faulted mappings)
EPS = np.finfo(float).eps  # msprobe's Const.FLOAT_EPSILON
RTOL, ATOL = 1.3e-6, 1e-5  # torch.testing.assert_close's float32 defaults


def ordered(bits):
    wide = bits.astype(np.int64)
    return np.where(wide < 0, -(wide & 0x7FFFFFFF), wide)


def main(a_path, b_path):
    start, cpu_start = time.perf_counter(), time.process_time()
    a = np.memmap(a_path, dtype=np.float32, mode="r")
    b = np.memmap(b_path, dtype=np.float32, mode="r")
    n = a.size
    dot = sxx = syy = sum_abs = sum_sq = 0.0
    max_abs = max_rel = 0.0
    thousandth = five = not_close = beyond = max_ulp = 0
    nan_a = nan_b = inf_a = inf_b = 0
    mismatch = False
    for lo in range(0, n, CHUNK):
        x = a[lo:lo + CHUNK].astype(np.float64)
        y = b[lo:lo + CHUNK].astype(np.float64)
        xn, yn, xi, yi = np.isnan(x), np.isnan(y), np.isinf(x), np.isinf(y)
        nan_a += int(xn.sum()); nan_b += int(yn.sum()); inf_a += int(xi.sum()); inf_b += int(yi.sum())
        not_close += int((~np.isclose(x, y, rtol=RTOL, atol=ATOL)).sum())
        ua, ub = a[lo:lo + CHUNK].view(np.int32), b[lo:lo + CHUNK].view(np.int32)
        dist = np.abs(ordered(ua) - ordered(ub))
        max_ulp = max(max_ulp, int(dist.max()))
        beyond += int((dist > 1).sum())
        if xn.any() or yn.any() or xi.any() or yi.any():  # msprobe handle_inf_nan
            if np.array_equal(xn, yn) and np.array_equal(xi, yi):
                x[xn | xi] = 0
                y[yn | yi] = 0
            else:
                mismatch = True
        d = x - y
        ad = np.abs(d)
        dot += float(x.dot(y)); sxx += float(x.dot(x)); syy += float(y.dot(y))
        sum_abs += float(ad.sum()); sum_sq += float(d.dot(d))
        max_abs = max(max_abs, float(ad.max()))
        zero = y == 0
        rel = np.abs((np.where(zero, x + EPS, x) - np.where(zero, EPS, y)) / np.where(zero, EPS, y))
        max_rel = max(max_rel, float(rel.max()))
        thousandth += int((rel < 0.001).sum()); five += int((rel < 0.005).sum())
    nan = float("nan")
    out = {
        "cosine": dot / (np.sqrt(sxx) * np.sqrt(syy)),
        "max_abs_err": max_abs, "max_rel_err": max_rel, "mean_abs_err": sum_abs / n,
        "rmse": np.sqrt(sum_sq / n), "euclidean": np.sqrt(sum_sq),
        "one_thousandth_ratio": thousandth / n, "five_thousandths_ratio": five / n,
    }
    if mismatch:
        out = {k: nan for k in out}
    out.update({"max_ulp": max_ulp, "ulp_beyond_share": beyond / n, "not_close": not_close,
                "nan_a": nan_a, "nan_b": nan_b, "inf_a": inf_a, "inf_b": inf_b})
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    for k, v in out.items():
        print(k, repr(float(v)))
    print("cpu_seconds", repr(cpu_seconds))
    print("seconds", repr(seconds))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
