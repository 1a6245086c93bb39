#include "common/number_range.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace plumb {
namespace {

constexpr size_t kShownChars = 24;

std::string bound(double v, bool whole) {
  return whole ? fmt::format("{}", static_cast<long long>(v)) : fmt::format("{:g}", v);
}

}  // namespace

std::string describe(const NumberRange& r) {
  const char* kind = r.whole ? "a whole number" : "a number";
  if (r.above_least) {
    return fmt::format("{} above {} and at most {}", kind, bound(r.least, r.whole),
                       bound(r.most, r.whole));
  }
  return fmt::format("{} from {} to {}", kind, bound(r.least, r.whole), bound(r.most, r.whole));
}

std::string shorten(std::string_view text) {
  if (text.size() <= kShownChars) return std::string(text);
  return std::string(text.substr(0, kShownChars - 3)) + "...";
}

std::optional<double> parse_number(std::string_view text, const NumberRange& r,
                                   std::string& problem) {
  const std::string copy(text);
  char* end = nullptr;
  const double v = copy.empty() ? NAN : std::strtod(copy.c_str(), &end);
  const bool number = !copy.empty() && end != copy.c_str() && *end == '\0';
  const bool in_range = number && std::isfinite(v) && (r.above_least ? v > r.least : v >= r.least) &&
                        v <= r.most;
  if (in_range && (!r.whole || v == std::floor(v))) return v;
  problem = fmt::format("must be {}, got '{}'", describe(r), shorten(text));
  return std::nullopt;
}

}  // namespace plumb
