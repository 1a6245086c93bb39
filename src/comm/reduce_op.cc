#include "comm/reduce_op.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::comm {
namespace {

constexpr std::array<std::string_view, 5> kNames = {"sum", "prod", "max", "min", "avg"};

}  // namespace

std::string_view name(ReduceOp op) { return kNames[static_cast<size_t>(op)]; }

ReduceOp parse_reduce_op(std::string_view text) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == text) return static_cast<ReduceOp>(i);
  }
  std::vector<std::string> names(kNames.begin(), kNames.end());
  throw Error(unknown_name("--op", "reduction", text, names));
}

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return a + b;
    case ReduceOp::kProd: return a * b;
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kMin: return std::min(a, b);
  }
  return a;
}

}  // namespace plumb::comm
