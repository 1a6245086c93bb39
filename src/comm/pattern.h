// Inputs for the correctness check (#wrong). Every input and every reduced result is an exact
// integer inside the data type's exact range (so reduction order cannot change a result, even in
// bfloat16), depends on the rank and the element index, and the reduction over ranks has a
// closed form, so checking costs O(count) per rank, not O(ranks × count). docs/comm.md derives
// each family.
#pragma once

#include <cstddef>
#include <optional>

#include "comm/dtype.h"
#include "comm/reduce_op.h"

namespace plumb::comm {

class Pattern {
 public:
  // For a collective that reduces with `op` over `nranks` ranks.
  Pattern(DataType type, ReduceOp op, int nranks);
  // For a collective that only moves data.
  Pattern(DataType type, int nranks);

  // Element `index` of `rank`'s input.
  double value(int rank, size_t index) const;
  // The reduction of value(r, index) over all ranks r (for avg: the sum divided by the ranks).
  double reduced(size_t index) const;

  // How far a result may be from `expected` and still count as right: 0 except for avg computed
  // by pre-multiplying each input with 1/n (NCCL's float avg) when n is not a power of two.
  double tolerance(double expected, bool avg_premultiplied) const;

  DataType type() const { return type_; }

 private:
  bool hot(int rank, size_t index) const {
    return static_cast<size_t>(rank) == index % static_cast<size_t>(nranks_);
  }

  DataType type_;
  std::optional<ReduceOp> op_;
  int nranks_;
  size_t modulus_;  // period of the index-dependent part, chosen to stay exact
};

}  // namespace plumb::comm
