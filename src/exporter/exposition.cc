#include "exporter/exposition.h"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

namespace plumb::exporter {
namespace {

// The replacement character, for a byte that does not start a valid UTF-8 sequence.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Integers below 2^63 are printed as integers: exact (the double's own value) and read back to
// the same double.
constexpr double kIntegerLimit = 9223372036854775808.0;

bool is_alpha_(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Room for one sample line: its name, labels and quotes, and a number (24 bytes at most).
std::size_t estimate(const Family& f) {
  std::size_t size = 2 * f.name.size() + f.help.size() + 24;
  for (const Sample& s : f.samples) {
    size += f.name.size() + s.suffix.size() + 28;
    for (const auto& [name, value] : s.labels) size += name.size() + value.size() + 4;
  }
  return size;
}

// The length of the valid UTF-8 sequence at the start of `s` (RFC 3629 table 3), or 0.
std::size_t utf8_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {  // not overlong (E0), not a surrogate (ED)
    n = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80;
    hi = c == 0xED ? 0x9F : 0xBF;
  } else if (c >= 0xF0 && c <= 0xF4) {  // not overlong (F0), not past U+10FFFF (F4)
    n = 4;
    lo = c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xF4 ? 0x8F : 0xBF;
  }
  if (n == 0 || s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  }
  return n;
}

// Bytes that need a look in a label value (backslash, newline, double quote, any non-ASCII byte)
// and in a help text (the same but the quote): the common run of plain bytes is skipped in a
// tight loop.
struct EscapeTable {
  bool label[256] = {};
  bool help[256] = {};
  constexpr EscapeTable() {
    for (int c = 0x80; c < 256; ++c) label[c] = help[c] = true;
    label['\\'] = help['\\'] = label['\n'] = help['\n'] = label['"'] = true;
  }
};
constexpr EscapeTable kEscape;

// `text` escaped: backslash and newline always, the double quote in a label value; a byte that
// does not begin a valid UTF-8 sequence becomes U+FFFD.
void append_escaped(std::string& out, std::string_view text, bool label) {
  const bool* needs = label ? kEscape.label : kEscape.help;
  std::size_t plain = 0;  // start of the run not yet appended
  for (std::size_t i = 0; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (!needs[u]) {
      ++i;
      continue;
    }
    const std::size_t n = u < 0x80 ? 1 : utf8_length(text.substr(i));
    if (n > 1) {
      i += n;
      continue;
    }
    out.append(text.data() + plain, i - plain);
    const char c = text[i];
    out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '"' ? "\\\"" : kReplacement;
    plain = ++i;
  }
  out.append(text.data() + plain, text.size() - plain);
}

void check_family(const Family& f) {
  if (!valid_metric_name(f.name)) {
    throw std::logic_error("exposition: invalid metric name '" + f.name + "'");
  }
  if (f.type != "gauge" && f.type != "counter" && f.type != "summary" && f.type != "histogram" &&
      f.type != "untyped") {
    throw std::logic_error("exposition: " + f.name + ": unknown type '" + f.type + "'");
  }
}

void append_labels(std::string& out, const Family& f, const Labels& labels) {
  if (labels.empty()) return;
  out += '{';
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto& [name, value] = labels[i];
    if (!valid_label_name(name)) {
      throw std::logic_error("exposition: " + f.name + ": invalid label name '" + name + "'");
    }
    if (i > 0) out += ',';
    out += name;
    out += "=\"";
    append_escaped(out, value, true);
    out += '"';
  }
  out += '}';
}

void append_header(std::string& out, const Family& f) {
  out += "# HELP ";
  out += f.name;
  out += ' ';
  append_escaped(out, f.help, false);
  out += "\n# TYPE ";
  out += f.name;
  out += ' ';
  out += f.type;
  out += '\n';
}

void append_sample(std::string& out, const Family& f, const Sample& s) {
  if (!s.suffix.empty() && s.suffix != "_sum" && s.suffix != "_count" && s.suffix != "_bucket") {
    throw std::logic_error("exposition: " + f.name + ": unknown sample suffix '" + s.suffix + "'");
  }
  out += f.name;
  out += s.suffix;
  append_labels(out, f, s.labels);
  out += ' ';
  append_value(out, s.value);
  out += '\n';
}

}  // namespace

bool valid_metric_name(std::string_view name) {
  if (name.empty() || !(is_alpha_(name[0]) || name[0] == ':')) return false;
  for (char c : name) {
    if (!is_alpha_(c) && !is_digit(c) && c != ':') return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || !is_alpha_(name[0]) || name.substr(0, 2) == "__") return false;
  for (char c : name) {
    if (!is_alpha_(c) && !is_digit(c)) return false;
  }
  return true;
}

void append_value(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[32];
  std::to_chars_result r;
  if (v == std::trunc(v) && std::fabs(v) < kIntegerLimit) {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
  } else {
    r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip
  }
  out.append(buf, r.ptr);
}

std::vector<RenderedFamily> render_families(const Families& families) {
  std::vector<RenderedFamily> out;
  std::unordered_map<std::string_view, std::size_t> index;
  for (const Family& f : families) {
    check_family(f);
    if (f.samples.empty()) continue;
    auto [it, fresh] = index.try_emplace(f.name, out.size());
    if (fresh) {
      out.push_back({f.name, f.type, {}, {}});
      append_header(out.back().header, f);
    } else if (out[it->second].type != f.type) {
      throw std::logic_error("exposition: " + f.name + ": type " + f.type + " after " +
                             out[it->second].type);
    }
    std::string& samples = out[it->second].samples;
    samples.reserve(samples.size() + estimate(f));
    for (const Sample& s : f.samples) append_sample(samples, f, s);
  }
  return out;
}

void append_exposition(std::string& out,
                       const std::vector<const std::vector<RenderedFamily>*>& parts) {
  std::size_t size = out.size();
  for (const auto* part : parts) {
    for (const RenderedFamily& f : *part) size += f.header.size() + f.samples.size();
  }
  out.reserve(size);
  // Each name once, at its first appearance; usually every name is in one part only.
  std::unordered_map<std::string_view, bool> written;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    for (const RenderedFamily& f : *parts[p]) {
      if (!written.try_emplace(f.name, true).second) continue;
      out += f.header;
      out += f.samples;
      for (std::size_t q = p + 1; q < parts.size(); ++q) {
        for (const RenderedFamily& g : *parts[q]) {
          if (g.name == f.name) out += g.samples;
        }
      }
    }
  }
}

// One pass into one buffer reserved once, unless a name repeats (then families are folded).
std::string render_exposition(const Families& families) {
  std::unordered_map<std::string_view, bool> names;
  std::size_t size = 0;
  for (const Family& f : families) {
    if (!f.samples.empty() && !names.try_emplace(f.name, true).second) {
      const std::vector<RenderedFamily> rendered = render_families(families);
      std::string out;
      append_exposition(out, {&rendered});
      return out;
    }
    size += estimate(f);
  }
  std::string out;
  out.reserve(size);
  for (const Family& f : families) {
    check_family(f);
    if (f.samples.empty()) continue;
    append_header(out, f);
    for (const Sample& s : f.samples) append_sample(out, f, s);
  }
  return out;
}

}  // namespace plumb::exporter
