#include "check/probe_text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace plumb::check {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && blank(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !blank(text[i])) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    start = end + 1;
  }
  return out;
}

std::optional<long> to_long(std::string_view text) {
  long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<unsigned long> to_hex(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  unsigned long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, 16);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<double> leading_number(std::string_view text) {
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr == text.data() || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace plumb::check

namespace plumb::check {
namespace {

std::string_view trim_view(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t' || t.front() == '\r')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.remove_suffix(1);
  return t;
}

bool same_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && starts_with_nocase(a, b);
}

// The numbers after the row's name ("enabled 0 0 0 1" -> {0, 0, 0, 1}), or nothing when the row
// is named otherwise or holds anything else.
std::optional<std::vector<long>> table_row(std::string_view line, std::string_view name) {
  const std::vector<std::string_view> w = words(line);
  if (w.size() < 2 || w.front() != name) return std::nullopt;
  std::vector<long> values;
  for (size_t i = 1; i < w.size(); ++i) {
    const std::optional<long> v = to_long(w[i]);
    if (!v) return std::nullopt;
    values.push_back(*v);
  }
  return values;
}

std::optional<std::vector<int>> zip_rows(const std::vector<long>& priority,
                                         const std::vector<long>& enabled) {
  if (priority.size() != enabled.size()) return std::nullopt;
  std::vector<int> on;
  for (size_t i = 0; i < priority.size(); ++i) {
    if (priority[i] < 0 || priority[i] > kMaxPriority || enabled[i] < 0 || enabled[i] > 1) {
      return std::nullopt;
    }
    if (enabled[i] == 1) on.push_back(static_cast<int>(priority[i]));
  }
  return on;
}

}  // namespace

std::optional<std::string> keyed_value(std::string_view text, std::string_view key) {
  for (std::string_view line : lines(text)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (same_nocase(trim_view(line.substr(0, colon)), key)) {
      return std::string(trim_view(line.substr(colon + 1)));
    }
  }
  return std::nullopt;
}

std::optional<std::vector<int>> pfc_enabled_priorities(std::string_view text) {
  const std::vector<std::string_view> all = lines(text);
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    const std::optional<std::vector<long>> priority = table_row(all[i], "priority");
    if (!priority) continue;
    const std::optional<std::vector<long>> enabled = table_row(all[i + 1], "enabled");
    if (!enabled) return std::nullopt;
    return zip_rows(*priority, *enabled);
  }
  return std::nullopt;
}

std::string priority_list(const std::vector<int>& priorities) {
  if (priorities.empty()) return "none";
  std::string out;
  for (const int p : priorities) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out;
}

}  // namespace plumb::check
