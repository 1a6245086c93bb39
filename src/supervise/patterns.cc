#include "supervise/patterns.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <utility>

namespace plumb::supervise {
namespace {

using Kind = PatternPiece::Kind;

// Spaces and lower-case letters in English order, commonest first.
constexpr std::string_view kCommonFirst = " etaoinsrhldcumfpgwybvkxjqz";
// 'y' and the letters after it in kCommonFirst are rare in log text.
constexpr size_t kRareLettersFrom = kCommonFirst.find('y');

// How common a character is in log text, higher for commoner: spaces and lower-case letters in
// English order, then digits and the punctuation of timestamps and tables; the rest (capitals,
// other punctuation) are rare.
int commonness(char c) {
  if (size_t at = kCommonFirst.find(c); at != std::string_view::npos) {
    return 100 - static_cast<int>(at);
  }
  if ((c >= '0' && c <= '9') || std::string_view(":,.-/|()[]").find(c) != std::string_view::npos) {
    return 50;
  }
  return 0;
}

// A character rare enough in log text that memchr, which skips 32 or 64 bytes a step between
// its few occurrences, finds it faster than the pair test of find_literal, which costs the same
// on every 16 bytes: capitals, punctuation other than that of timestamps and tables, and the
// rarest lower-case letters. Measured on the Megatron and plain lines of bench/run_overhead_job
// (docs/performance.md): memchr about 9x faster for 'N', '=', 'y'; the pair test 1.0-6x faster
// for 'r', 'c', ':', '.'.
bool rare(char c) {
  if (size_t at = kCommonFirst.find(c); at != std::string_view::npos) {
    return at >= kRareLettersFrom;
  }
  return commonness(c) == 0;
}

// The offset of the literal's least common character (the first of them).
size_t rarest(std::string_view literal) {
  size_t best = 0;
  for (size_t i = 1; i < literal.size(); ++i) {
    if (commonness(literal[i]) < commonness(literal[best])) best = i;
  }
  return best;
}

// The offsets of the literal's two least common characters, in the literal's order (0 and 0 for
// a literal of one character): the pair searched for first.
std::pair<size_t, size_t> rarest_pair(std::string_view literal) {
  const size_t first = rarest(literal);
  if (literal.size() < 2) return {first, first};
  size_t second = first == 0 ? 1 : 0;
  for (size_t i = 0; i < literal.size(); ++i) {
    if (i != first && commonness(literal[i]) < commonness(literal[second])) second = i;
  }
  return {std::min(first, second), std::max(first, second)};
}

// 16 bytes compared at once, with GCC's and Clang's vector extensions (SSE2 on x86-64, NEON on
// AArch64): no intrinsics, no CPU dispatch.
using Bytes16 = char __attribute__((vector_size(16)));
constexpr size_t kVectorBytes = 16;

Bytes16 load16(const char* at) {
  Bytes16 v;
  std::memcpy(&v, at, kVectorBytes);
  return v;
}

template <class Mask>
bool any(const Mask& mask) {
  uint64_t halves[2];
  std::memcpy(halves, &mask, sizeof halves);
  return (halves[0] | halves[1]) != 0;
}

// The first occurrence of p.literal at or after `from`: a memchr for its rarest character, then
// the whole literal compared.
size_t find_by_memchr(const LinePattern& p, std::string_view line, size_t from) {
  const size_t size = p.literal.size();
  const char c = p.literal[p.anchor];
  for (size_t i = from + p.anchor; i < line.size();) {
    const void* hit = std::memchr(line.data() + i, c, line.size() - i);
    if (hit == nullptr) break;
    const size_t at = static_cast<size_t>(static_cast<const char*>(hit) - line.data()) - p.anchor;
    if (at + size <= line.size() && std::memcmp(line.data() + at, p.literal.data(), size) == 0) {
      return at;
    }
    i = at + p.anchor + 1;
  }
  return std::string_view::npos;
}

// The first occurrence of p.literal in `line` at or after `from`. A literal whose rarest
// character is rare in logs (rare()) is found by memchr; any other, such as "iteration" or
// "aclrt" whose letters are all common, by testing 16 positions at once for its two least common
// characters at their offsets, the literal compared only where both are there: a line full of
// 'r' or 'c' costs no more than one without them.
size_t find_literal(const LinePattern& p, std::string_view line, size_t from) {
  const size_t size = p.literal.size();
  if (size > line.size() || from > line.size() - size) return std::string_view::npos;
  if (p.by_memchr) return find_by_memchr(p, line, from);
  const char* text = line.data();
  const size_t last = line.size() - size;  // the last place the literal can begin
  const Bytes16 first = Bytes16{} + p.literal[p.anchor];
  const Bytes16 second = Bytes16{} + p.literal[p.anchor2];
  size_t at = from;
  for (; at + p.anchor2 + kVectorBytes <= line.size(); at += kVectorBytes) {
    const auto hits =
        (load16(text + at + p.anchor) == first) & (load16(text + at + p.anchor2) == second);
    if (!any(hits)) continue;
    for (size_t k = 0; k < kVectorBytes && at + k <= last; ++k) {
      if (hits[k] != 0 && std::memcmp(text + at + k, p.literal.data(), size) == 0) return at + k;
    }
  }
  for (; at <= last; ++at) {
    if (std::memcmp(text + at, p.literal.data(), size) == 0) return at;
  }
  return std::string_view::npos;
}

LinePattern make(std::string name, std::string literal, const std::string& regex) {
  const auto [anchor, anchor2] = rarest_pair(literal);
  LinePattern p(std::move(name), std::move(literal), Regex(regex, "default pattern"));
  p.anchor = anchor;
  p.anchor2 = anchor2;
  if (p.literal.size() < 2 || rare(p.literal[rarest(p.literal)])) {
    p.by_memchr = true;
    p.anchor = rarest(p.literal);
  }
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

// RE2's \s (Perl's: [\t\n\f\r ], no \v), \d and \w (ASCII, whatever the encoding), and [^|].
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
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

// The regex's leftmost match for a pattern given as pieces: the first occurrence of the
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
  // plumb.train-events/1 JSONL (docs/train-events.md), printed by the job: a line that holds the
  // schema's name and a "step" key, in any order ({"schema": "plumb.train-events/1", "step": 120,
  // "step_seconds": 1.2}); "step_seconds" is not "step" (the closing quote).
  out.push_back(make("plumb-train-events", "plumb.train-events/1", R"("step"\s*:\s*(\d+))"));
  return out;
}

std::vector<LinePattern> default_fatal_patterns() {
  std::vector<LinePattern> out;
  // NCCL: "NCCL WARN ... " / "ncclInternalError" / "NCCL error in: ..."; watchdog timeouts (an
  // entry of their own: the literal prefilter needs a literal every match holds).
  out.push_back(make("nccl-error", "NCCL", R"(NCCL (error|WARN .*(failed|timeout|Error)))"));
  out.push_back(make("nccl-error", "Watchdog caught",
                     R"(Watchdog caught collective operation timeout)"));
  out.push_back(make("nccl-result", "nccl", R"(\bnccl(InternalError|SystemError|InvalidUsage|RemoteError)\b)"));
  // HCCL: "HCCL ... ERROR" lines and its EI/EJ error codes.
  out.push_back(make("hccl-error", "HCCL", R"(HCCL.*(ERROR|error|timeout|Timeout))"));
  // CUDA and Ascend ACL runtime errors.
  out.push_back(make("cuda-error", "CUDA error", R"(CUDA error)"));
  // Two entries, one literal each: "aclrtMalloc failed" holds no "ACL", and the literal
  // prefilter would skip it under one entry whose literal was "ACL".
  out.push_back(make("acl-error", "ACL", R"(\bACL (error|ERROR))"));
  out.push_back(make("acl-error", "aclrt", R"(aclrt\w+ failed)"));
  // Device memory and hardware faults.
  out.push_back(make("out-of-memory", "out of memory", R"(out of memory)"));
  out.push_back(make("ecc", "ECC", R"(uncorrectable ECC|ECC error)"));
  out.push_back(make("xid", "Xid", R"(\bXid\b)"));
  return out;
}

std::vector<LinePattern> default_resume_patterns() {
  std::vector<LinePattern> out;
  // Megatron-LM load_checkpoint: "  successfully loaded checkpoint from /ckpt [ t 1/8, p 1/4 ] at
  // iteration 1000"
  out.push_back(make("megatron", "successfully loaded checkpoint from",
                     R"(successfully loaded checkpoint from .* at iteration (\d+))"));
  // Hugging Face Trainer: "  Continuing training from global step 1000"
  out.push_back(make("hf-trainer", "Continuing training from global step",
                     R"(Continuing training from global step (\d+))"));
  // torchtitan CheckpointManager.load: "Loading the checkpoint at step 1000."
  out.push_back(make("torchtitan", "Loading the checkpoint at step",
                     R"(Loading the checkpoint at step (\d+))"));
  return out;
}

LinePattern user_pattern(const std::string& option, const std::string& pattern) {
  return LinePattern(option, "", Regex(pattern, option));
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
  line = line.substr(0, kMaxLineBytes);
  for (const LinePattern& p : patterns) {
    const size_t at = p.literal.empty() ? 0 : find_literal(p, line, 0);
    if (at == std::string_view::npos) continue;
    if (!p.pieces.empty()) {
      if (std::optional<LineMatch> m = match_pieces(p, line, at)) return m;
      continue;
    }
    std::string_view groups[2];
    if (!p.regex.search(line, groups)) continue;
    LineMatch out{&p, std::nullopt};
    if (groups[1].data() != nullptr) out.step = step_number(groups[1]);
    return out;
  }
  return std::nullopt;
}

}  // namespace plumb::supervise
