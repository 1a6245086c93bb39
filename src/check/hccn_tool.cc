#include "check/hccn_tool.h"

#include <cctype>

#include "check/probe_text.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

// hccn_tool's traffic classes are 802.1p's 8 (it refuses tc > 3 on 910B, "value out of valid
// range"); DSCP: kMaxDscp (probe_text.h).
constexpr long kMaxTrafficClass = 7;
constexpr size_t kExcerptChars = 60;

std::vector<long> numbers_in(std::string_view line) {
  std::vector<long> out;
  size_t i = 0;
  while (i < line.size()) {
    if (!std::isdigit(static_cast<unsigned char>(line[i]))) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    const std::optional<long> v = i - start <= 9 ? to_long(line.substr(start, i - start)) : std::nullopt;
    out.push_back(v.value_or(-1));
  }
  return out;
}

std::optional<std::string> first_word(std::optional<std::string> value) {
  if (!value) return std::nullopt;
  const std::vector<std::string_view> w = words(*value);
  if (w.empty()) return std::nullopt;
  return std::string(w.front());
}

}  // namespace

std::optional<std::string> parse_hccn_link(std::string_view text) {
  return first_word(keyed_value(text, "link status"));
}

std::optional<std::string> parse_hccn_net_health(std::string_view text) {
  return first_word(keyed_value(text, "net health status"));
}

std::optional<std::vector<int>> parse_hccn_pfc(std::string_view text) {
  return pfc_enabled_priorities(text);
}

std::map<int, int> parse_hccn_dscp_to_tc(std::string_view text) {
  std::map<int, int> map;
  for (std::string_view line : lines(text)) {
    const std::vector<long> n = numbers_in(line);
    if (n.size() != 2 || n[0] < 0 || n[0] > kMaxDscp || n[1] < 0 || n[1] > kMaxTrafficClass) continue;
    map[static_cast<int>(n[0])] = static_cast<int>(n[1]);
  }
  return map;
}

std::string output_excerpt(std::string_view text) {
  const std::vector<std::string_view> all = lines(text);
  std::string_view first;
  for (std::string_view line : all) {
    if (!trim_blanks(line).empty()) {
      first = trim_blanks(line);
      break;
    }
  }
  std::string out = terminal_safe(first.substr(0, kExcerptChars));
  if (first.size() > kExcerptChars) out += "...";
  return out;
}

}  // namespace plumb::check
