// `plumb diff` on a terminal: one line per (layer, collective, dtype, size) with the busbw and p99
// change and its verdict, then every context difference, then the verdict of the whole comparison:
// a regression, too noisy to judge (with what would make it judgeable), or none.
#pragma once

#include <ostream>

#include "baseline/diff.h"

namespace plumb::report {

// `all`: also the rows whose verdict is "same" (otherwise they are counted, not listed).
void print_diff(const baseline::Diff& diff, bool all, std::ostream& out);

}  // namespace plumb::report
