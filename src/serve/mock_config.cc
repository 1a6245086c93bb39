#include "serve/mock_config.h"

#include "common/error.h"
#include "common/strings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

namespace plumb::serve {
namespace {

struct DurationUnit {
  std::string_view suffix;
  double ns;
};
// Longest suffix first so that "ms" is not read as "s".
constexpr DurationUnit kDurationUnits[] = {
    {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}};

std::string quoted(std::string_view what, std::string_view text) {
  return std::string(what) + " '" + std::string(text) + "'";
}

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return {};
  return value;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return {};
  return value;
}

int parse_count(std::string_view text, std::string_view what) {
  auto value = parse_int(text);
  if (!value || *value < 0 || *value > std::numeric_limits<int>::max())
    throw Error(quoted(what, text) + ": expected a count (0 or more)");
  return static_cast<int>(*value);
}

int parse_status(std::string_view text, std::string_view what) {
  auto value = parse_int(text);
  if (!value || *value < 100 || *value > 599)
    throw Error(quoted(what, text) + ": expected an HTTP status (100-599)");
  return static_cast<int>(*value);
}

using Setter = std::function<void(MockPlan&, std::string_view value, const std::string& what)>;
struct OverrideKey {
  std::string_view name;
  Setter set;
};

void set_stall(MockPlan& plan, std::string_view value, const std::string& what) {
  auto colon = value.find(':');
  if (colon == std::string_view::npos)
    throw Error(quoted(what, value) + ": expected K:DURATION (stall after K tokens)");
  plan.stall_after = parse_count(value.substr(0, colon), what);
  plan.stall_ns = parse_mock_duration(value.substr(colon + 1), what);
}

void set_framing(MockPlan& plan, std::string_view value, const std::string& what) {
  if (value != "chunked" && value != "close")
    throw Error(quoted(what, value) + ": expected chunked or close");
  plan.close_delimited = value == "close";
}

const std::vector<OverrideKey>& override_keys() {
  static const std::vector<OverrideKey> keys = {
      {"ttft", [](MockPlan& p, auto v, auto& w) { p.ttft_ns = parse_mock_duration(v, w); }},
      {"itl", [](MockPlan& p, auto v, auto& w) { p.itl_ns = parse_mock_duration(v, w); }},
      {"itl_per_active",
       [](MockPlan& p, auto v, auto& w) { p.itl_per_active_ns = parse_mock_duration(v, w); }},
      {"tokens", [](MockPlan& p, auto v, auto& w) { p.tokens = parse_count(v, w); }},
      {"stall", set_stall},
      {"status", [](MockPlan& p, auto v, auto& w) { p.status = parse_status(v, w); }},
      {"drop", [](MockPlan& p, auto v, auto& w) { p.drop_after = parse_count(v, w); }},
      {"malformed", [](MockPlan& p, auto v, auto& w) { p.malformed_after = parse_count(v, w); }},
      {"hang", [](MockPlan& p, auto v, auto& w) { p.hang_after = parse_count(v, w); }},
      {"framing", set_framing},
  };
  return keys;
}

std::vector<std::string> override_key_names() {
  std::vector<std::string> names;
  for (const auto& key : override_keys()) names.emplace_back(key.name);
  return names;
}

}  // namespace

Nanos mock_gap(const MockPlan& plan, int active) {
  return plan.itl_ns + plan.itl_per_active_ns * std::max(0, active - 1);
}

bool MockErrorRule::matches(std::int64_t index) const {
  if (every > 0) return (index + 1) % every == 0;
  return index >= first && index <= last;
}

Nanos parse_mock_duration(std::string_view text, std::string_view what) {
  text = trim_blanks(text);
  if (text == "0") return 0;
  for (const auto& unit : kDurationUnits) {
    if (text.size() <= unit.suffix.size() || !text.ends_with(unit.suffix)) continue;
    auto number = parse_double(text.substr(0, text.size() - unit.suffix.size()));
    // 1e15 ns is 11 days: far beyond any test, far below an int64 overflow.
    if (number && *number >= 0 && *number * unit.ns < 1e15)
      return static_cast<Nanos>(std::llround(*number * unit.ns));
    break;
  }
  throw Error(quoted(what, text) + ": expected a duration such as 50ms, 200us or 1.5s");
}

void apply_mock_overrides(MockPlan& plan, std::string_view text, std::string_view what) {
  for (const auto& item : split_list(text, ',')) {
    auto field = trim_blanks(item);
    if (field.empty()) continue;
    auto eq = field.find('=');
    if (eq == std::string_view::npos)
      throw Error(std::string(what) + ": expected key=value, got '" + std::string(field) + "'");
    auto key = trim_blanks(field.substr(0, eq));
    auto value = trim_blanks(field.substr(eq + 1));
    const OverrideKey* found = nullptr;
    for (const auto& candidate : override_keys())
      if (candidate.name == key) found = &candidate;
    if (!found) throw Error(unknown_name(what, "key", key, override_key_names()));
    found->set(plan, value, std::string(what) + " " + std::string(key));
  }
}

void apply_mock_option(MockPlan& plan, std::string_view key, std::string_view value,
                       std::string_view option) {
  for (const auto& candidate : override_keys())
    if (candidate.name == key) return candidate.set(plan, trim_blanks(value), std::string(option));
  throw Error(unknown_name(option, "key", key, override_key_names()));
}

MockErrorRule parse_mock_error_rule(std::string_view text, std::string_view what) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos)
    throw Error(quoted(what, text) + ": expected STATUS:FIRST-LAST, STATUS:INDEX or STATUS:every=N");
  MockErrorRule rule;
  rule.status = parse_status(text.substr(0, colon), what);
  auto which = text.substr(colon + 1);
  if (which.starts_with("every=")) {
    rule.every = parse_count(which.substr(6), what);
    if (rule.every == 0) throw Error(quoted(what, text) + ": every=N needs N of 1 or more");
    return rule;
  }
  auto dash = which.find('-');
  rule.first = parse_count(which.substr(0, dash), what);
  rule.last = dash == std::string_view::npos ? rule.first : parse_count(which.substr(dash + 1), what);
  if (rule.last < rule.first) throw Error(quoted(what, text) + ": the range ends before it starts");
  return rule;
}

}  // namespace plumb::serve
