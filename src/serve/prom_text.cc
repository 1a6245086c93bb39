#include "serve/prom_text.h"

#include "common/error.h"
#include "common/strings.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace plumb::serve {
namespace {

constexpr std::string_view kTypes[] = {"counter", "gauge", "histogram", "summary", "untyped"};

bool name_start(char c, bool colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}
bool name_char(char c, bool colon) { return name_start(c, colon) || (c >= '0' && c <= '9'); }

// A cursor over one line; every failure names the line.
class Line {
 public:
  Line(std::string_view text, std::string_view source, std::size_t number)
      : text_(text), source_(source), number_(number) {}

  [[noreturn]] void fail(std::string_view expected) const {
    std::string rest(text_.substr(at_, kQuoteMax));
    throw Error(std::string(source_) + ":" + std::to_string(number_) + ": expected " +
                std::string(expected) + " (got '" + terminal_safe(rest) + "')");
  }
  bool done() const { return at_ >= text_.size(); }
  char peek() const { return done() ? '\0' : text_[at_]; }
  void skip_blanks() {
    while (!done() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  bool take(char c) {
    if (peek() != c) return false;
    ++at_;
    return true;
  }
  std::string name(bool colon, std::string_view what) {
    if (!name_start(peek(), colon)) fail(what);
    std::size_t start = at_;
    while (!done() && name_char(text_[at_], colon)) ++at_;
    return std::string(text_.substr(start, at_ - start));
  }
  std::string word() {
    std::size_t start = at_;
    while (!done() && text_[at_] != ' ' && text_[at_] != '\t') ++at_;
    return std::string(text_.substr(start, at_ - start));
  }
  std::string_view rest() const { return text_.substr(std::min(at_, text_.size())); }

  // A label value after its opening quote: \\ \" \n escapes, up to the closing quote.
  std::string quoted() {
    std::string out;
    while (true) {
      if (done()) fail("a closing '\"' of the label value");
      char c = text_[at_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = peek();
      if (e != '\\' && e != '"' && e != 'n') fail("an escape \\\\, \\\" or \\n in a label value");
      ++at_;
      out += e == 'n' ? '\n' : e;
    }
  }

 private:
  std::string_view text_;
  std::string_view source_;
  std::size_t number_;
  std::size_t at_ = 0;
};

// Go's strconv.ParseFloat, as expfmt reads values: decimal and exponent forms, and NaN / Inf /
// Infinity in any case with an optional sign.
std::optional<double> parse_value(std::string_view text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  std::string_view body = lower;
  bool negative = !body.empty() && body[0] == '-';
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) body.remove_prefix(1);
  if (body == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (body == "inf" || body == "infinity")
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  if (body.empty() || !((body[0] >= '0' && body[0] <= '9') || body[0] == '.')) return {};
  double value = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (end != body.data() + body.size()) return {};
  if (ec == std::errc::result_out_of_range)  // Go gives ±Inf or 0 there; so do we
    value = std::abs(std::strtod(std::string(body).c_str(), nullptr));
  else if (ec != std::errc())
    return {};
  return negative ? -value : value;
}

std::string unescape_help(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
      out += text[++i] == 'n' ? '\n' : '\\';
    } else {
      out += text[i];
    }
  }
  return out;
}

void read_comment(Line& line, PromText& out) {
  line.take('#');
  line.skip_blanks();
  std::string keyword = line.word();
  if (keyword != "HELP" && keyword != "TYPE") return;  // any other comment
  line.skip_blanks();
  std::string family = line.name(true, "a metric name after # " + keyword);
  line.skip_blanks();
  if (keyword == "HELP") {
    out.help[family] = unescape_help(line.rest());
    return;
  }
  std::string type = line.word();
  bool known = false;
  for (auto t : kTypes) known = known || t == type;
  if (!known) line.fail("counter, gauge, histogram, summary or untyped after # TYPE " + family);
  out.types[family] = type;
}

void read_labels(Line& line, PromSample& sample) {
  while (true) {
    line.skip_blanks();
    if (line.take('}')) return;
    std::string label = line.name(false, "a label name or '}'");
    for (const auto& [existing, value] : sample.labels)
      if (existing == label) line.fail("each label once (" + label + " is repeated)");
    line.skip_blanks();
    if (!line.take('=')) line.fail("'=' after the label name " + label);
    line.skip_blanks();
    if (!line.take('"')) line.fail("'\"' opening the value of " + label);
    sample.labels.emplace_back(label, line.quoted());
    line.skip_blanks();
    if (line.take(',')) continue;
    if (line.take('}')) return;
    line.fail("',' or '}' after a label value");
  }
}

void read_sample(Line& line, PromText& out) {
  PromSample sample;
  sample.name = line.name(true, "a metric name");
  line.skip_blanks();
  if (line.take('{')) read_labels(line, sample);
  line.skip_blanks();
  auto value = parse_value(line.word());
  if (!value) line.fail("a value (a number, NaN, +Inf or -Inf)");
  sample.value = *value;
  line.skip_blanks();
  if (!line.done()) {
    std::string stamp = line.word();
    std::int64_t ms = 0;
    auto [end, ec] = std::from_chars(stamp.data(), stamp.data() + stamp.size(), ms);
    if (ec != std::errc() || end != stamp.data() + stamp.size())
      line.fail("a timestamp in milliseconds after the value");
    sample.timestamp_ms = ms;
    line.skip_blanks();
    if (!line.done()) line.fail("the end of the line after the timestamp");
  }
  out.samples.push_back(std::move(sample));
}

}  // namespace

PromText parse_prom_text(std::string_view text, std::string_view source) {
  PromText out;
  std::size_t number = 0;
  while (!text.empty()) {
    auto eol = text.find('\n');
    std::string_view raw = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    Line line(raw, source, number);
    line.skip_blanks();
    if (line.done()) continue;
    if (line.peek() == '#') read_comment(line, out);
    else read_sample(line, out);
  }
  return out;
}

}  // namespace plumb::serve
