#include "topo/hostlist.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::topo {
namespace {

// Numbers in names: 18 digits fit in a uint64_t with room for the +1 of a range's next value.
constexpr size_t kMaxDigits = 18;

struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;  // zero-padded to this many digits
};

// One name of the list: literal text and bracket groups in turn.
struct Part {
  std::string literal;
  std::vector<Range> ranges;  // empty: a literal part
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), is_digit);
}

uint64_t to_number(std::string_view digits) {
  uint64_t value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

std::string padded(uint64_t value, size_t width) { return fmt::format("{:0{}}", value, width); }

[[noreturn]] void bad_range(std::string_view item, std::string_view why) {
  throw Error(fmt::format("bad range '{}' in a hostlist ({})", item, why));
}

// "7" or "01-16"; the width is the lower bound's, as Slurm pads.
Range parse_range(std::string_view item) {
  const size_t dash = item.find('-');
  const std::string_view lo = item.substr(0, dash);
  const std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
  if (!all_digits(lo) || !all_digits(hi)) bad_range(item, "expected numbers such as 01-16");
  if (lo.size() > kMaxDigits || hi.size() > kMaxDigits) {
    bad_range(item, fmt::format("numbers have at most {} digits", kMaxDigits));
  }
  const Range range{to_number(lo), to_number(hi), lo.size()};
  if (range.hi < range.lo) bad_range(item, "it goes backwards");
  if (hi.size() > 1 && hi[0] == '0' && hi.size() != lo.size()) {
    bad_range(item, "its bounds are zero-padded to different widths");
  }
  return range;
}

std::vector<Range> parse_brackets(std::string_view inside, std::string_view name) {
  if (inside.empty()) throw Error(fmt::format("empty brackets in '{}' in a hostlist", name));
  std::vector<Range> ranges;
  size_t start = 0;
  while (true) {
    const size_t comma = inside.find(',', start);
    ranges.push_back(parse_range(inside.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return ranges;
}

// Bracket groups in one name: Slurm's multi-dimensional names have at most 5 (HIGHEST_DIMENSIONS).
constexpr size_t kMaxGroups = 16;

// A name is printable UTF-8 without blanks: what a map, a message and a terminal can show as is.
void check_characters(std::string_view name) {
  const bool blank = std::any_of(name.begin(), name.end(), [](char c) { return c == ' '; });
  if (blank || terminal_safe(name) != name) {
    throw Error(fmt::format("'{}' in a hostlist holds a blank, a control character or bytes that "
                            "are not UTF-8",
                            terminal_safe(name)));
  }
  if (static_cast<size_t>(std::count(name.begin(), name.end(), '[')) > kMaxGroups) {
    throw Error(fmt::format("'{}' in a hostlist has more than {} bracket groups", terminal_safe(name),
                            kMaxGroups));
  }
}

// "rack[1-2]-n[01-04]" -> literal "rack", group, literal "-n", group.
std::vector<Part> parse_name(std::string_view name) {
  if (name.empty()) throw Error("an empty name in a hostlist (two commas, or one at an end)");
  check_characters(name);
  std::vector<Part> parts;
  size_t at = 0;
  while (at < name.size()) {
    const size_t open = name.find('[', at);
    if (open != at) parts.push_back({std::string(name.substr(at, open - at)), {}});
    if (open == std::string_view::npos) break;
    const size_t close = name.find(']', open);  // split_names checked the pairing
    parts.push_back({"", parse_brackets(name.substr(open + 1, close - open - 1), name)});
    at = close + 1;
  }
  return parts;
}

// Splits on the commas outside brackets; brackets must pair up and not nest.
std::vector<std::string_view> split_names(std::string_view text) {
  std::vector<std::string_view> names;
  size_t start = 0;
  bool inside = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[' && inside) throw Error(fmt::format("'[' inside brackets in hostlist '{}'", text));
    if (c == ']' && !inside) throw Error(fmt::format("']' without '[' in hostlist '{}'", text));
    if (c == '[' || c == ']') inside = c == '[';
    if (c == ',' && !inside) {
      names.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (inside) throw Error(fmt::format("'[' without ']' in hostlist '{}'", text));
  names.push_back(text.substr(start));
  return names;
}

size_t range_count(const std::vector<Range>& ranges) {
  size_t count = 0;
  for (const Range& r : ranges) count += static_cast<size_t>(std::min<uint64_t>(r.hi - r.lo, kMaxHostlistNames)) + 1;
  return count;
}

// How many names the parts give, checked against what is left of the limit before any is made.
void check_count(const std::vector<Part>& parts, std::string_view name, size_t left, size_t limit) {
  size_t count = 1;
  for (const Part& p : parts) {
    if (p.ranges.empty()) continue;
    const size_t n = range_count(p.ranges);
    if (n > left / count) {
      throw Error(fmt::format("hostlist '{}' expands to more than {} names", name, limit));
    }
    count *= n;
  }
  if (count > left) throw Error(fmt::format("hostlist '{}' expands to more than {} names", name, limit));
}

void expand_parts(const std::vector<Part>& parts, size_t index, std::string& prefix,
                  std::vector<std::string>& out) {
  if (index == parts.size()) {
    out.push_back(prefix);
    return;
  }
  const Part& part = parts[index];
  const size_t keep = prefix.size();
  if (part.ranges.empty()) {
    prefix += part.literal;
    expand_parts(parts, index + 1, prefix, out);
  } else {
    for (const Range& r : part.ranges) {
      for (uint64_t v = r.lo; v <= r.hi; ++v) {
        prefix += padded(v, r.width);
        expand_parts(parts, index + 1, prefix, out);
        prefix.resize(keep);
      }
    }
  }
  prefix.resize(keep);
}

// A name seen as prefix, last number and suffix ("n01-ib" -> "n", 01, "-ib").
struct Numbered {
  std::string_view prefix;
  std::string_view digits;  // empty: no number (or too long a one) to range over
  std::string_view suffix;
  uint64_t value = 0;
};

Numbered split_number(std::string_view name) {
  size_t end = name.size();
  while (end > 0 && !is_digit(name[end - 1])) --end;
  size_t begin = end;
  while (begin > 0 && is_digit(name[begin - 1])) --begin;
  if (begin == end || end - begin > kMaxDigits) return {name, {}, {}, 0};
  const std::string_view digits = name.substr(begin, end - begin);
  return {name.substr(0, begin), digits, name.substr(end), to_number(digits)};
}

bool joins(const Numbered& a, const Numbered& b) {
  return !a.digits.empty() && !b.digits.empty() && a.prefix == b.prefix && a.suffix == b.suffix &&
         b.value > a.value;
}

// "01-03,07" for the numbers of one group, each range padded as its first number.
std::string group_ranges(const std::vector<Numbered>& group) {
  std::vector<std::string> ranges;
  for (size_t k = 0; k < group.size();) {
    const size_t start = k;
    const size_t width = group[k].digits.size();
    while (k + 1 < group.size() && group[k + 1].value == group[k].value + 1 &&
           padded(group[k + 1].value, width) == group[k + 1].digits) {
      ++k;
    }
    ranges.push_back(k == start ? std::string(group[start].digits)
                                : fmt::format("{}-{}", group[start].digits, group[k].digits));
    ++k;
  }
  return join(ranges, ",");
}

void check_writable(const std::string& name) {
  if (name.empty() || name.find_first_of(",[] \t\r\n") != std::string::npos) {
    throw Error(fmt::format("the name '{}' cannot be written in a hostlist (it is empty or holds "
                            "',', '[', ']' or a blank)",
                            terminal_safe(name)));
  }
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view text, size_t limit) {
  std::vector<std::string> out;
  for (std::string_view name : split_names(text)) {
    const std::vector<Part> parts = parse_name(name);
    check_count(parts, name, limit - out.size(), limit);
    std::string prefix;
    expand_parts(parts, 0, prefix, out);
  }
  return out;
}

std::string compress_hostlist(std::span<const std::string> names) {
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size();) {
    check_writable(names[i]);
    std::vector<Numbered> group = {split_number(names[i])};
    size_t j = i + 1;
    while (j < names.size()) {
      check_writable(names[j]);
      const Numbered next = split_number(names[j]);
      if (!joins(group.back(), next)) break;
      group.push_back(next);
      ++j;
    }
    out.push_back(group.size() == 1 ? names[i]
                                    : fmt::format("{}[{}]{}", group[0].prefix,
                                                  group_ranges(group), group[0].suffix));
    i = j;
  }
  return join(out, ",");
}

}  // namespace plumb::topo
