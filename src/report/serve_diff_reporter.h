// `plumb diff` of two serving records on a terminal (each matched run's figures A and B with their
// change, noise and verdict; the runs only in A or B; what else differs; one verdict line) and as
// plumb.serve-diff/1 JSON.
#pragma once

#include <ostream>

#include "baseline/serve_diff.h"

namespace plumb::report {

void print_serve_diff(const baseline::ServeDiff& diff, std::ostream& out);
void write_serve_diff_json(const baseline::ServeDiff& diff, std::ostream& out);

}  // namespace plumb::report
