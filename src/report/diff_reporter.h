// `plumb diff` on a terminal: one line per (layer, collective, dtype, size) with the busbw and p99
// change and its verdict, then every context difference, then the verdict of the whole comparison:
// a regression, too noisy to judge (with what would make it judgeable), or none.
#pragma once

#include <ostream>
#include <string>

#include "baseline/diff.h"

namespace plumb::report {

// `all`: also the rows whose verdict is "same" (otherwise they are counted, not listed).
void print_diff(const baseline::Diff& diff, bool all, std::ostream& out);

// The diffs' console text (comm, model step, recovery, serving): a number in `spec` and a relative
// change as "+12.3%", "-" where unknown (NaN); a record as "baseline 3 · label · created", its
// strings escaped for the terminal.
std::string number(double v, const char* spec);
std::string percent(double change);
std::string ref_text(const baseline::RecordRef& r);

}  // namespace plumb::report
