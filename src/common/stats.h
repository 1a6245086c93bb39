// Small statistics used by every measurement: mean, percentiles.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace plumb {

// A figure not known (an empty input, a division by zero): printed "-", JSON null.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double mean(std::span<const double> values);

// Percentile p in [0, 100] with linear interpolation between closest ranks (the "linear" method
// of Hyndman & Fan 1996, type 7; numpy.percentile's default): for sorted x of n values,
// h = (n - 1) * p / 100, result = x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h]).
// Returns 0 for an empty input.
double percentile(std::span<const double> values, double p);

// The same, on values already sorted ascending (no copy).
double percentile_sorted(std::span<const double> sorted, double p);

// The median (the mean of the middle two for an even count); NaN for an empty input.
double median(std::vector<double> values);

// The median absolute deviation from the median; NaN for an empty input.
double median_absolute_deviation(const std::vector<double>& values);

// The lower of the middle two for an even count (an element of the input, so exact in integers);
// the values must not be empty.
int64_t lower_median(std::vector<int64_t> values);

}  // namespace plumb
