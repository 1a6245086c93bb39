// The average busbw (comm::summarize, docs/comm.md "Summary line") as every text output writes it:
// the console table's summary lines, `plumb show`, the HTML report and `plumb diff` all print the
// figure through average_busbw_text, so the same record shows the same digits everywhere.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "comm/result.h"

namespace plumb::report {

// GB/s with two decimals, as nccl-tests' tables print busbw; "-" for NaN.
std::string average_busbw_text(double gbps);

// What the console says under its header so the reader knows what a table line and the average
// are over.
inline constexpr const char* kTableGroupsLine =
    "# each table: per size, the layer's slowest group (lowest busbw); avg busbw: each group's "
    "mean over the sizes ≥ 1 MiB, then the mean over the layer's groups";

// `plumb diff`'s table of the two records' average busbw per (layer, collective), A's order first.
void print_average_busbw(const std::vector<comm::Summary>& a, const std::vector<comm::Summary>& b,
                         std::ostream& out);

}  // namespace plumb::report
