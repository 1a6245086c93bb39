// Reduction operators, named as nccl-tests' -o spells them.
#pragma once

#include <string_view>

namespace plumb::comm {

enum class ReduceOp { kSum, kProd, kMax, kMin, kAvg };

std::string_view name(ReduceOp op);

// Parses sum, prod, max, min or avg; throws plumb::Error listing the valid names.
ReduceOp parse_reduce_op(std::string_view name);

// Applies `op` to two values (avg combines as sum; the division by the rank count is separate).
double combine(ReduceOp op, double a, double b);

}  // namespace plumb::comm
