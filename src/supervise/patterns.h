// What `plumb run` looks for in a job's output: progress lines (with the step number) and fatal
// lines, each a regular expression behind a cheap literal prefilter so that a million lines cost
// a substring search each, not a regex match (docs/run.md, "Progress" and "Fatal lines").
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::supervise {

// One piece of a pattern matched without std::regex: a text, or a run of at least `min`
// characters of a class (\s as isspace in the C locale, \d, or [^|]), taken greedily.
struct PatternPiece {
  enum class Kind { kText, kSpaces, kDigits, kNotBar };
  Kind kind = Kind::kText;
  std::string_view text;  // kText
  int min = 0;            // the runs
  bool step = false;      // this run is group 1, the step number
};

struct LinePattern {
  std::string name;      // "megatron", "nccl-error", or "--progress-regex"
  std::string literal;   // a substring every match contains; empty: try the regex on every line
  std::regex regex;      // group 1, when present, is the step number (progress patterns)
  // The same pattern as pieces, for the defaults whose regex is a chain of pieces that start with
  // `literal` (after a \b when word_start) and each end where the next begins, so the greedy
  // walk from each occurrence of the literal finds what regex_search finds (patterns_test.cc
  // checks that they agree). Empty: the regex decides.
  bool word_start = false;
  std::vector<PatternPiece> pieces;
  size_t anchor = 0;  // the literal's least common character: the one searched for first
};

// The defaults: Megatron-LM, DeepSpeed, Hugging Face Trainer, torchtitan step lines and
// plumb.train-events/1 JSONL for progress; NCCL/HCCL, CUDA/ACL, ECC/Xid and out-of-memory for
// fatal lines.
std::vector<LinePattern> default_progress_patterns();
std::vector<LinePattern> default_fatal_patterns();

// A user's pattern (ECMAScript); a pattern that does not compile throws plumb::Error naming
// `option` and the pattern, exit 2.
LinePattern user_pattern(const std::string& option, const std::string& pattern);

struct LineMatch {
  const LinePattern* pattern = nullptr;
  std::optional<int64_t> step;  // from group 1 when it holds a number
};

// The first pattern `line` matches (regex_search), or none.
std::optional<LineMatch> match_line(const std::vector<LinePattern>& patterns,
                                    std::string_view line);

// Where the patterns' literals occur in a block of output, each searched forward through the
// block once: the lines that hold none of them need no match_line.
class LiteralCursor {
 public:
  LiteralCursor(const std::vector<LinePattern>& patterns, std::string_view text);
  // False when no literal starts in text[begin, end), so that no pattern can match a line there;
  // true when one does or a pattern has no literal. Calls go forward: begin never decreases.
  bool may_match(size_t begin, size_t end);

 private:
  const std::vector<LinePattern>& patterns_;
  std::string_view text_;
  std::vector<size_t> next_;  // per pattern: its literal's next occurrence, npos when none
  bool always_ = false;
};

}  // namespace plumb::supervise
