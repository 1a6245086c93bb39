// What the simple one-table importers (hccl_test, OSU) share: line splitting, numbers with
// file:line errors, and rows whose bandwidths plumb computes itself.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "baseline/importers/importer.h"

namespace plumb::baseline {

// Calls fn(line_number, line) for every line, without the line break.
void for_each_line(std::string_view text, const std::function<void(int, std::string_view)>& fn);

// Whitespace-separated words; `extra_separators` count as spaces too ("|" for hccl_test).
std::vector<std::string> split_words(std::string_view line, std::string_view extra_separators = "");

// A finite number or an Error "<file>:<line>: expected a number in column '<column>', got '<x>'".
double parse_number(const std::string& cell, std::string_view column, std::string_view file,
                    int line);

// A row of a tool that reports time per size only: algbw = bytes / 1e9 / time and busbw from the
// collective's factor for `ranks` (nccl-tests' definitions, docs/comm.md); unknown tails are NaN.
comm::Row row_from_time(const std::string& collective, const std::string& dtype, int ranks,
                        uint64_t bytes, double time_us);

// The rank count a log needs for busbw: options.ranks, or an Error naming the file.
int required_ranks(const ImportOptions& options, std::string_view file, std::string_view tool);

}  // namespace plumb::baseline
