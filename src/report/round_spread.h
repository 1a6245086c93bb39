// busbw's spread over the rounds of a sweep (plumb comm / baseline --rounds): Row::busbw_spread,
// the rounds' median absolute deviation from their median, relative to it (comm/rounds.cc). The
// HTML report writes it with one decimal as a percentage, like the console's spread column.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace plumb::report {

// 0.0213 -> "2.1%"; "—" when measured once (NaN).
inline std::string spread_text(double spread) {
  return std::isnan(spread) ? std::string("—") : fmt::format("{:.1f}%", spread * 100.0);
}

}  // namespace plumb::report
