#include "supervise/patterns.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>

#include "common/error.h"

namespace plumb::supervise {
namespace {

using Kind = PatternPiece::Kind;

// How common a character is in log text, higher for commoner: spaces and lower-case letters in
// English order, then digits and the punctuation of timestamps and tables; the rest (capitals,
// other punctuation) are rare.
int commonness(char c) {
  static constexpr std::string_view kCommonFirst = " etaoinsrhldcumfpgwybvkxjqz";
  if (size_t at = kCommonFirst.find(c); at != std::string_view::npos) {
    return 100 - static_cast<int>(at);
  }
  if ((c >= '0' && c <= '9') || std::string_view(":,.-/|()[]").find(c) != std::string_view::npos) {
    return 50;
  }
  return 0;
}

size_t rarest(std::string_view literal) {
  size_t best = 0;
  for (size_t i = 1; i < literal.size(); ++i) {
    if (commonness(literal[i]) < commonness(literal[best])) best = i;
  }
  return best;
}

// The first occurrence of p.literal in `line` at or after `from`: a memchr for its rarest
// character, then the whole literal compared, so that a line full of the literal's first
// character costs little.
size_t find_literal(const LinePattern& p, std::string_view line, size_t from) {
  const size_t size = p.literal.size();
  const char c = p.literal[p.anchor];
  for (size_t i = from + p.anchor; i < line.size();) {
    const void* hit = std::memchr(line.data() + i, c, line.size() - i);
    if (hit == nullptr) break;
    const size_t at_anchor = static_cast<size_t>(static_cast<const char*>(hit) - line.data());
    const size_t at = at_anchor - p.anchor;
    if (at + size <= line.size() && line[at] == p.literal[0] &&
        std::memcmp(line.data() + at, p.literal.data(), size) == 0) {
      return at;
    }
    i = at_anchor + 1;
  }
  return std::string_view::npos;
}

LinePattern make(std::string name, std::string literal, const std::string& regex) {
  LinePattern p;
  p.name = std::move(name);
  p.anchor = rarest(literal);
  p.literal = std::move(literal);
  p.regex = std::regex(regex, std::regex::ECMAScript | std::regex::optimize);
  return p;
}

// The same, with its regex spelled as pieces (see LinePattern::pieces).
LinePattern make(std::string name, std::string literal, const std::string& regex, bool word_start,
                 std::vector<PatternPiece> pieces) {
  LinePattern p = make(std::move(name), std::move(literal), regex);
  p.word_start = word_start;
  p.pieces = std::move(pieces);
  return p;
}

PatternPiece text(std::string_view t) { return {Kind::kText, t, 0, false}; }
PatternPiece spaces(int min) { return {Kind::kSpaces, {}, min, false}; }
PatternPiece digits(int min) { return {Kind::kDigits, {}, min, false}; }
PatternPiece step_digits() { return {Kind::kDigits, {}, 1, true}; }
PatternPiece not_bar() { return {Kind::kNotBar, {}, 0, false}; }

// std::regex's \s, \d and \w in the C locale, and [^|].
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool in_class(Kind kind, char c) {
  switch (kind) {
    case Kind::kSpaces: return is_space(c);
    case Kind::kDigits: return is_digit(c);
    case Kind::kNotBar: return c != '|';
    case Kind::kText: break;
  }
  return false;
}

// Walks the pieces from `at`; the step's digits land in `step`. False when a piece does not fit.
bool walk(const std::vector<PatternPiece>& pieces, std::string_view line, size_t at,
          std::string_view& step) {
  for (const PatternPiece& piece : pieces) {
    if (piece.kind == Kind::kText) {
      if (line.substr(at, piece.text.size()) != piece.text) return false;
      at += piece.text.size();
      continue;
    }
    size_t end = at;
    while (end < line.size() && in_class(piece.kind, line[end])) ++end;
    if (end - at < static_cast<size_t>(piece.min)) return false;
    if (piece.step) step = line.substr(at, end - at);
    at = end;
  }
  return true;
}

std::optional<int64_t> step_number(std::string_view digits) {
  int64_t step = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec == std::errc() && end == digits.data() + digits.size()) return step;
  return std::nullopt;
}

// regex_search's leftmost match for a pattern given as pieces: the first occurrence of the
// literal, from `from` on, where the walk succeeds.
std::optional<LineMatch> match_pieces(const LinePattern& p, std::string_view line, size_t from) {
  for (size_t at = from; at != std::string_view::npos; at = find_literal(p, line, at + 1)) {
    const bool word_before = at > 0 && is_word(line[at - 1]);
    if (p.word_start && word_before == is_word(line[at])) continue;  // \b
    std::string_view step;
    if (!walk(p.pieces, line, at, step)) continue;
    LineMatch out{&p, std::nullopt};
    if (!step.empty()) out.step = step_number(step);
    return out;
  }
  return std::nullopt;
}

}  // namespace

std::vector<LinePattern> default_progress_patterns() {
  std::vector<LinePattern> out;
  // Megatron-LM training_log: " [2024-05-01 10:00:00] iteration      100/   10000 | consumed ..."
  out.push_back(make("megatron", "iteration", R"(\biteration\s+(\d+)/\s*\d+\s*\|)", true,
                     {text("iteration"), spaces(1), step_digits(), text("/"), spaces(0),
                      digits(1), spaces(0), text("|")}));
  // DeepSpeed engine: "[Rank 0] step=100, skipped=0, lr=[...], mom=[...]"
  out.push_back(make("deepspeed", "step=", R"(\bstep=(\d+),\s*skipped=)", true,
                     {text("step="), step_digits(), text(","), spaces(0), text("skipped=")}));
  // torchtitan: "step:  10  loss:  9.5432  memory: 12.3GiB(15.6%) ..."
  out.push_back(make("torchtitan", "step:", R"(\bstep:\s*(\d+)\s+loss:)", true,
                     {text("step:"), spaces(0), step_digits(), spaces(1), text("loss:")}));
  // Hugging Face Trainer (tqdm): " 12%|█▏        | 120/1000 [01:02<07:37,  1.92it/s]"
  out.push_back(make("hf-trainer", "%|", R"(%\|[^|]*\|\s*(\d+)/\d+\s*\[)", false,
                     {text("%|"), not_bar(), text("|"), spaces(0), step_digits(), text("/"),
                      digits(1), spaces(0), text("[")}));
  // plumb.train-events/1 JSONL: {"event": "step", "step": 120, ...}
  out.push_back(make("plumb-train-events", "\"step\"", R"("event"\s*:\s*"step".*"step"\s*:\s*(\d+))"));
  return out;
}

std::vector<LinePattern> default_fatal_patterns() {
  std::vector<LinePattern> out;
  // NCCL: "NCCL WARN ... " / "ncclInternalError" / "NCCL error in: ..."; watchdog timeouts.
  out.push_back(make("nccl-error", "NCCL", R"(NCCL (error|WARN .*(failed|timeout|Error))|Watchdog caught collective operation timeout)"));
  out.push_back(make("nccl-result", "nccl", R"(\bnccl(InternalError|SystemError|InvalidUsage|RemoteError)\b)"));
  // HCCL: "HCCL ... ERROR" lines and its EI/EJ error codes.
  out.push_back(make("hccl-error", "HCCL", R"(HCCL.*(ERROR|error|timeout|Timeout))"));
  // CUDA and Ascend ACL runtime errors.
  out.push_back(make("cuda-error", "CUDA error", R"(CUDA error)"));
  out.push_back(make("acl-error", "ACL", R"(\bACL (error|ERROR)|aclrt\w+ failed)"));
  // Device memory and hardware faults.
  out.push_back(make("out-of-memory", "out of memory", R"(out of memory)"));
  out.push_back(make("ecc", "ECC", R"(uncorrectable ECC|ECC error)"));
  out.push_back(make("xid", "Xid", R"(\bXid\b)"));
  return out;
}

LinePattern user_pattern(const std::string& option, const std::string& pattern) {
  try {
    return make(option, "", pattern);
  } catch (const std::regex_error&) {
    throw Error(fmt::format("{} '{}': not a valid regular expression", option, pattern));
  }
}

LiteralCursor::LiteralCursor(const std::vector<LinePattern>& patterns, std::string_view text)
    : patterns_(patterns), text_(text), next_(patterns.size(), 0) {
  for (size_t k = 0; k < patterns.size(); ++k) {
    if (patterns[k].literal.empty()) always_ = true;
    else next_[k] = find_literal(patterns[k], text, 0);
  }
}

bool LiteralCursor::may_match(size_t begin, size_t end) {
  if (always_) return true;
  bool found = false;
  for (size_t k = 0; k < next_.size(); ++k) {
    if (next_[k] != std::string_view::npos && next_[k] < begin) {
      next_[k] = find_literal(patterns_[k], text_, begin);
    }
    if (next_[k] < end) found = true;  // npos is never below end
  }
  return found;
}

std::optional<LineMatch> match_line(const std::vector<LinePattern>& patterns,
                                    std::string_view line) {
  for (const LinePattern& p : patterns) {
    const size_t at = p.literal.empty() ? 0 : find_literal(p, line, 0);
    if (at == std::string_view::npos) continue;
    if (!p.pieces.empty()) {
      if (std::optional<LineMatch> m = match_pieces(p, line, at)) return m;
      continue;
    }
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(line.begin(), line.end(), m, p.regex)) continue;
    LineMatch out{&p, std::nullopt};
    if (m.size() > 1 && m[1].matched) {
      out.step = step_number(std::string_view(&*m[1].first, static_cast<size_t>(m[1].length())));
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace plumb::supervise
