#include "exporter/value_bounds.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "comm/placement.h"
#include "common/number_range.h"
#include "common/strings.h"

namespace plumb::exporter {
namespace {

constexpr double kExactIntegers = 9007199254740992.0;  // 2^53: every integer below is a double

}  // namespace

std::string bound_text(double bound) {
  if (std::trunc(bound) == bound && std::fabs(bound) <= kExactIntegers) {
    return fmt::format("{}", static_cast<int64_t>(bound));
  }
  return fmt::format("{:g}", bound);
}

std::optional<std::string> layer_problem(std::string_view layer, std::string_view where) {
  const std::span<const std::string> names = comm::layer_names();
  if (std::find(names.begin(), names.end(), layer) != names.end()) return std::nullopt;
  return unknown_name(where, "layer", terminal_safe(shorten(layer)), names);
}

std::optional<std::string> bandwidth_problem(double algbw, double busbw) {
  const double bound = kMaxBandwidthBytesPerSecond;
  if (algbw <= bound && busbw <= bound) return std::nullopt;  // false for NaN too
  return fmt::format("a busbw of {:.3g} B/s (algbw {:.3g} B/s), above the {:g} B/s no link or "
                     "memory reaches",
                     busbw, algbw, bound);
}

}  // namespace plumb::exporter
