// libFuzzer target: plumb run's line patterns and line scanner. The input's first line is a
// user's --progress-regex; the rest is a job's output. Compiling the pattern must return or throw
// plumb::Error; the output fed in reads of any size must give the lines a whole split gives, each
// cut at 64 KiB; every default walked as pieces must agree with its own regex (match and step);
// whatever a default's regex matches must hold the default's literal (the prefilter is sound),
// and a line the literal cursor skips must match no pattern. Seeds hold lines past 64 KiB and the
// patterns that broke std::regex ('(a+)+b', '(a|aa)*c', '.*step (\d+).*').
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "supervise/patterns.h"

namespace {

using plumb::supervise::LineMatch;
using plumb::supervise::LinePattern;

const std::vector<LinePattern>& progress() {
  static const std::vector<LinePattern> p = plumb::supervise::default_progress_patterns();
  return p;
}
const std::vector<LinePattern>& fatal() {
  static const std::vector<LinePattern> p = plumb::supervise::default_fatal_patterns();
  return p;
}
const std::vector<LinePattern>& resume() {
  static const std::vector<LinePattern> p = plumb::supervise::default_resume_patterns();
  return p;
}

// The lines of `text` split whole, each cut at 64 KiB; the rest after the last '\n' is not one.
std::vector<std::string> whole_lines(std::string_view text) {
  std::vector<std::string> out;
  for (size_t start = 0, nl; (nl = text.find('\n', start)) != std::string_view::npos;
       start = nl + 1) {
    out.emplace_back(text.substr(start, std::min(nl - start, plumb::supervise::kMaxLineBytes)));
  }
  return out;
}

// The same text fed in reads whose sizes follow from the input itself.
std::vector<std::string> split_in_reads(std::string_view text, uint32_t seed) {
  plumb::supervise::LineSplitter splitter;
  std::vector<std::string> out;
  for (size_t at = 0; at < text.size();) {
    seed = seed * 1664525u + 1013904223u;  // Numerical Recipes' LCG
    const size_t size = 1 + (seed >> 8) % 70000;
    splitter.feed(text.substr(at, size), [&](std::string_view line, size_t) {
      out.emplace_back(line);
      return true;
    });
    at += size;
  }
  return out;
}

void check_pieces_agree(std::string_view line) {
  for (const LinePattern& p : progress()) {
    if (p.pieces.empty()) continue;
    LinePattern regex_only = p;
    regex_only.pieces.clear();
    const std::optional<LineMatch> a = plumb::supervise::match_line({p}, line);
    const std::optional<LineMatch> b = plumb::supervise::match_line({regex_only}, line);
    if (a.has_value() != b.has_value() || (a && a->step != b->step)) std::abort();
  }
}

// The literal prefilter is sound: whatever a default's regex matches holds its literal, and
// match_line (its literal searched 16 positions at a time) finds what the regex alone finds.
// (The plumb.train-events/1 default is defined as its regex on a line holding its literal:
// there the literal is a condition of its own, docs/run.md.)
void check_literals(const std::vector<LinePattern>& patterns, std::string_view line) {
  line = line.substr(0, plumb::supervise::kMaxLineBytes);
  for (const LinePattern& p : patterns) {
    const bool holds = line.find(p.literal) != std::string_view::npos;
    const bool regex = p.regex.search(line);
    if (p.name != "plumb-train-events" && regex && !holds) std::abort();
    if (plumb::supervise::match_line({p}, line).has_value() != (regex && holds)) std::abort();
  }
}

void check_cursor(const std::vector<LinePattern>& patterns, std::string_view text) {
  plumb::supervise::LiteralCursor cursor(patterns, text);
  for (size_t start = 0, nl; (nl = text.find('\n', start)) != std::string_view::npos;
       start = nl + 1) {
    const std::string_view line = text.substr(start, nl - start);
    if (!cursor.may_match(start, nl) && plumb::supervise::match_line(patterns, line)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t first = input.find('\n');
  const std::string_view pattern = input.substr(0, first);
  const std::string_view text =
      first == std::string_view::npos ? std::string_view() : input.substr(first + 1);
  std::vector<LinePattern> user;
  try {
    user.push_back(plumb::supervise::user_pattern("--progress-regex", std::string(pattern)));
  } catch (const plumb::Error&) {
  }
  const std::vector<std::string> lines = whole_lines(text);
  if (split_in_reads(text, static_cast<uint32_t>(size)) != lines) std::abort();
  for (const std::string& line : lines) {
    check_pieces_agree(line);
    for (const auto* set : {&progress(), &fatal(), &resume()}) check_literals(*set, line);
    (void)plumb::supervise::match_line(fatal(), line);
    (void)plumb::supervise::match_line(resume(), line);
    if (!user.empty()) (void)plumb::supervise::match_line(user, line);
  }
  check_cursor(progress(), text);
  check_cursor(fatal(), text);
  return 0;
}
