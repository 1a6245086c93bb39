// `plumb diff` of two baseline sets on a terminal: the two sets, one short block per part (its
// verdict and what decided it), the context with the one-variable-at-a-time check, and the
// go/no-go line last. With `all`, each part's own full comparison follows its block (the comm
// diff with every row, the step and recovery diffs, the memory diff per rank).
#pragma once

#include <ostream>

#include "baseline/set_diff.h"

namespace plumb::report {

void print_set_diff(const baseline::SetDiff& diff, bool all, std::ostream& out);

// The memory diff per rank: settled level A and B with its change and verdict, creep A and B
// with its verdict, then the checkpoint check.
void print_memory_diff(const baseline::MemoryDiff& diff, std::ostream& out);

}  // namespace plumb::report
