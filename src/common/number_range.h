// The accepted values of a number a user gives, as an option or as a key of a YAML file, and the
// one check and message every such number goes through: finite, in range, whole where it counts
// something. A value is echoed in the message shortened, so a 300-digit number is not repeated.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace plumb {

struct NumberRange {
  double least = 0;
  double most = 0;
  bool above_least = false;  // `least` itself is refused: a quantity that must be positive
  bool whole = false;        // a count: no fraction
};

// "a whole number from 1 to 16777216", "a number above 0 and at most 1e+06",
// "a number from 1 to 3".
std::string describe(const NumberRange& range);

// The value of `text` when it is a number within `range`; otherwise nothing, and `problem` says
// "must be <describe(range)>, got '<text>'". Accepts what strtod does (1e3, 0x10) but not inf or
// nan, and nothing after the number.
std::optional<double> parse_number(std::string_view text, const NumberRange& range,
                                   std::string& problem);

// `text` as a message shows it: at most 24 characters, then "...".
std::string shorten(std::string_view text);

}  // namespace plumb
