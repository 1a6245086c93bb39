#include "comm/pattern.h"

#include <algorithm>
#include <cmath>

namespace plumb::comm {
namespace {

// Upper bound on the period of the plain (non-reducing) pattern: any value works as long as it
// stays exact; a prime keeps rank and index contributions from aliasing.
constexpr double kPlainPeriod = 1000003.0;

size_t modulus_for(DataType type, std::optional<ReduceOp> op, int nranks) {
  const double limit = info(type).max_exact;
  const double n = nranks;
  if (!op) return static_cast<size_t>(std::min(limit, kPlainPeriod));
  switch (*op) {
    // value = (i % m) + [hot]: the sum n·(m−1) + 1 must stay ≤ limit.
    case ReduceOp::kSum: return static_cast<size_t>(std::floor((limit - 1.0) / n)) + 1;
    // value = (i % m) ± 1 on two ranks: the sum n·(m−1) must stay ≤ limit, and m ≤ limit/(4n)
    // keeps the tolerance of a pre-multiplied avg, n·m·2/limit, below one half, so that a result
    // off by one is never accepted.
    case ReduceOp::kAvg:
      return std::max<size_t>(1, static_cast<size_t>(std::floor(limit / (4.0 * n))));
    default: return 1;  // prod/max/min use fixed small values
  }
}

}  // namespace

Pattern::Pattern(DataType type, ReduceOp op, int nranks)
    : type_(type), op_(op), nranks_(std::max(1, nranks)), modulus_(modulus_for(type, op, nranks_)) {}

Pattern::Pattern(DataType type, int nranks)
    : type_(type), nranks_(std::max(1, nranks)), modulus_(modulus_for(type, {}, nranks_)) {}

double Pattern::value(int rank, size_t index) const {
  const auto i = static_cast<double>(index % modulus_);
  if (!op_) {
    const size_t mixed = static_cast<size_t>(rank) * 31 + index;
    return static_cast<double>(mixed % modulus_);
  }
  const bool is_hot = hot(rank, index);
  switch (*op_) {
    case ReduceOp::kSum: return i + (is_hot ? 1.0 : 0.0);
    case ReduceOp::kProd: return is_hot ? 1.0 + static_cast<double>(index % 2) : 1.0;
    case ReduceOp::kMax:
      return is_hot ? 2.0 + static_cast<double>(index % 3) : static_cast<double>(index % 2);
    case ReduceOp::kMin:
      return is_hot ? -1.0 - static_cast<double>(index % 3) : static_cast<double>(index % 2);
    case ReduceOp::kAvg: {
      if (nranks_ == 1) return i;
      const bool after_hot = static_cast<size_t>(rank) == (index + 1) % static_cast<size_t>(nranks_);
      return i + (is_hot ? 1.0 : 0.0) - (after_hot ? 1.0 : 0.0);
    }
  }
  return 0.0;
}

double Pattern::reduced(size_t index) const {
  const auto i = static_cast<double>(index % modulus_);
  if (!op_) return value(0, index);
  switch (*op_) {
    case ReduceOp::kSum: return nranks_ * i + 1.0;
    case ReduceOp::kProd: return 1.0 + static_cast<double>(index % 2);
    case ReduceOp::kMax: return 2.0 + static_cast<double>(index % 3);
    case ReduceOp::kMin: return -1.0 - static_cast<double>(index % 3);
    case ReduceOp::kAvg: return i;
  }
  return 0.0;
}

double Pattern::tolerance(double expected, bool avg_premultiplied) const {
  const bool power_of_two = (nranks_ & (nranks_ - 1)) == 0;
  const bool floating = type_ != DataType::kInt8 && type_ != DataType::kInt32;
  if (!avg_premultiplied || op_ != ReduceOp::kAvg || power_of_two || !floating) return 0.0;
  // Each of the n pre-multiplied inputs and each partial sum rounds once: n·|x|·eps bounds it,
  // with eps = 2 / max_exact (one unit in the last place at 1).
  const double magnitude = std::abs(expected) + 1.0;
  return nranks_ * magnitude * 2.0 / info(type_).max_exact;
}

}  // namespace plumb::comm
