#include "common/strings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>

namespace plumb {

std::vector<std::string> split_list(std::string_view text, char sep) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) items.emplace_back(item);
    start = end + 1;
  }
  return items;
}

std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

std::string join(std::span<const std::string> items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string> candidates) {
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  auto match = closest_match(word, candidates);
  return match ? fmt::format(" (did you mean '{}'?)", *match) : std::string();
}

}  // namespace plumb

namespace plumb {

std::string unknown_name(std::string_view what, std::string_view noun, std::string_view word,
                         std::span<const std::string> names, std::string_view suggest_for) {
  return fmt::format("{}: unknown {} '{}'{}; expected one of {}", what, noun, word,
                     did_you_mean(suggest_for.empty() ? word : suggest_for, names),
                     join(names, ", "));
}

namespace {

// Length of the valid UTF-8 sequence starting at text[i] (1-4), or 0 when it is not one.
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3;
  else if (c >= 0xF0 && c <= 0xF4) n = 4;
  else return 0;
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  if (c == 0xE0 && byte(i + 1) < 0xA0) return 0;  // overlong
  if (c == 0xED && byte(i + 1) >= 0xA0) return 0;  // surrogates
  if (c == 0xF0 && byte(i + 1) < 0x90) return 0;  // overlong
  if (c == 0xF4 && byte(i + 1) >= 0x90) return 0;  // beyond U+10FFFF
  return n;
}

std::string escaped(unsigned char c) {
  switch (c) {
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return fmt::format("\\x{:02x}", c);
  }
}

}  // namespace

std::string terminal_safe(std::string_view text, bool keep_layout) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_length(text, i);
    if (n == 0) {
      out += escaped(c);
      ++i;
    } else if (n == 1 && (c < 0x20 || c == 0x7F) && !(keep_layout && (c == '\n' || c == '\t'))) {
      out += escaped(c);
      ++i;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));  // C1 control
      i += 2;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string valid_utf8_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i);
    if (n == 0 || text[i] == '\0') {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

size_t complete_utf8_prefix(std::string_view text) {
  const size_t back = std::min<size_t>(text.size(), 3);
  for (size_t k = 1; k <= back; ++k) {
    const auto c = static_cast<unsigned char>(text[text.size() - k]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > k ? text.size() - k : text.size();
  }
  return text.size();
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace plumb
