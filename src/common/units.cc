#include "common/units.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <limits>

#include "common/error.h"

namespace plumb {
namespace {

struct Suffix {
  std::string_view text;
  uint64_t factor;
};

constexpr std::array<Suffix, 14> kSuffixes = {{
    {"", 1},           {"B", 1},
    {"K", kKiB},       {"KB", kKiB},       {"KIB", kKiB},
    {"M", kMiB},       {"MB", kMiB},       {"MIB", kMiB},
    {"G", kGiB},       {"GB", kGiB},       {"GIB", kGiB},
    {"T", 1024 * kGiB}, {"TB", 1024 * kGiB}, {"TIB", 1024 * kGiB},
}};  // compared case-insensitively: 1m == 1M

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

uint64_t parse_bytes(std::string_view text, std::string_view what) {
  auto fail = [&] {
    return Error(fmt::format("{}: expected a byte count such as 8, 64K, 1M or 2G, got '{}'",
                             what, text));
  };
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) throw fail();
  uint64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      throw Error(fmt::format("{}: '{}' is too large", what, text));
    }
    value = value * 10 + d;
  }
  const std::string suffix = upper(text.substr(digits));
  for (const Suffix& s : kSuffixes) {
    if (s.text != suffix) continue;
    if (value != 0 && s.factor > std::numeric_limits<uint64_t>::max() / value) {
      throw Error(fmt::format("{}: '{}' is too large", what, text));
    }
    return value * s.factor;
  }
  throw fail();
}

std::string format_bytes(uint64_t bytes) {
  constexpr std::array<std::string_view, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  if (value == static_cast<double>(static_cast<uint64_t>(value))) {
    return fmt::format("{} {}", static_cast<uint64_t>(value), kUnits[unit]);
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace plumb
