#include "baseline/importers/table_helpers.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "comm/bandwidth.h"
#include "comm/collective.h"
#include "common/error.h"

namespace plumb::baseline {

void for_each_line(std::string_view text, const std::function<void(int, std::string_view)>& fn) {
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(++number, line);
    start = end + 1;
  }
}

std::vector<std::string> split_words(std::string_view line, std::string_view extra_separators) {
  std::vector<std::string> out;
  std::string word;
  for (char c : line) {
    const bool separator = c == ' ' || c == '\t' || extra_separators.find(c) != std::string_view::npos;
    if (!separator) {
      word += c;
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

double parse_number(const std::string& cell, std::string_view column, std::string_view file,
                    int line) {
  char* end = nullptr;
  const double value = std::strtod(cell.c_str(), &end);
  if (cell.empty() || end == cell.c_str() || *end != '\0' || !std::isfinite(value) || value < 0) {
    throw Error(fmt::format("{}:{}: expected a number in column '{}', got '{}'", file, line, column,
                            cell));
  }
  return value;
}

comm::Row row_from_time(const std::string& collective, const std::string& dtype, int ranks,
                        uint64_t bytes, double time_us) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  comm::Row r;
  r.layer = "world";
  r.group = "world";
  r.group_ranks = ranks;
  r.collective = collective;
  r.dtype = dtype;
  const comm::Collective& c = comm::find_collective(collective);
  r.op = c.uses_op() ? "sum" : "none";
  r.root = c.uses_root() ? 0 : -1;
  r.requested_bytes = r.bytes = bytes;
  r.count = 0;  // unknown for a type plumb does not know
  for (const comm::DataTypeInfo& t : comm::all_data_types()) {
    if (t.name == dtype) r.count = bytes / t.size;
  }
  r.time_us = time_us;
  r.algbw_gbps = comm::algbw_gbps(bytes, time_us * 1e-6);
  r.busbw_gbps = comm::busbw_gbps(r.algbw_gbps, c.bus_factor(ranks));
  r.wrong = -1;
  r.p50_us = r.p99_us = r.max_us = nan;
  r.straggler = -1;
  return r;
}

int required_ranks(const ImportOptions& options, std::string_view file, std::string_view tool) {
  if (options.ranks > 0) return options.ranks;
  throw Error(fmt::format("{}: {} logs do not say how many ranks ran, and busbw depends on it; "
                          "pass --ranks",
                          file, tool));
}

}  // namespace plumb::baseline
