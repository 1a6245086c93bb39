// What `plumb run` looks for in a job's output: progress lines (with the step number) and fatal
// lines, each a regular expression (RE2 through plumb::Regex: linear in the line, bounded in
// memory, whatever the pattern) behind a cheap literal prefilter so that a million lines cost a
// substring search each, not a regex match (docs/run.md, "Progress" and "Fatal lines").
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/regex.h"

namespace plumb::supervise {

// One piece of a pattern matched without a regex engine: a text, or a run of at least `min`
// characters of a class (RE2's \s: [\t\n\f\r ], \d: [0-9], or [^|]), taken greedily.
struct PatternPiece {
  enum class Kind { kText, kSpaces, kDigits, kNotBar };
  Kind kind = Kind::kText;
  std::string_view text;  // kText
  int min = 0;            // the runs
  bool step = false;      // this run is group 1, the step number
};

struct LinePattern {
  LinePattern(std::string name_, std::string literal_, Regex regex_)
      : name(std::move(name_)), literal(std::move(literal_)), regex(std::move(regex_)) {}

  std::string name;      // "megatron", "nccl-error", or "--progress-regex"
  std::string literal;   // a substring every match contains; empty: try the regex on every line
  Regex regex;           // group 1, when present, is the step number (progress patterns)
  // The same pattern as pieces, for the defaults whose regex is a chain of pieces that start with
  // `literal` (after a \b when word_start) and each end where the next begins, so the greedy
  // walk from each occurrence of the literal finds what the regex finds (patterns_test.cc
  // checks that they agree). Empty: the regex decides.
  bool word_start = false;
  std::vector<PatternPiece> pieces;
  // The offsets of the literal's two least common characters (anchor < anchor2): the pair
  // searched for first, 16 positions at a time; or, when by_memchr (its least common character
  // is rare in logs, or it has one character), that character's offset, searched by memchr.
  size_t anchor = 0;
  size_t anchor2 = 0;
  bool by_memchr = false;
};

// The defaults: Megatron-LM, DeepSpeed, Hugging Face Trainer, torchtitan step lines and
// plumb.train-events/1 JSONL for progress; NCCL/HCCL, CUDA/ACL, ECC/Xid and out-of-memory for
// fatal lines.
std::vector<LinePattern> default_progress_patterns();
std::vector<LinePattern> default_fatal_patterns();
// The lines in which a framework says which step it resumed from after loading a checkpoint
// (Megatron-LM, Hugging Face Trainer, torchtitan); group 1 is the last step the checkpoint holds,
// so the job's next step is one more. They count steps lost after a restart (docs/run.md).
std::vector<LinePattern> default_resume_patterns();

// A user's pattern (RE2 syntax: ECMAScript's and Perl's without backreferences and lookaround); a
// pattern RE2 refuses throws plumb::Error naming `option`, the pattern and RE2's reason, exit 2:
// "--progress-regex '(?=x)': not a valid regular expression (invalid perl operator: (?=)".
LinePattern user_pattern(const std::string& option, const std::string& pattern);

struct LineMatch {
  const LinePattern* pattern = nullptr;
  std::optional<int64_t> step;  // from group 1 when it holds a number
};

// A line is matched on its first kMaxLineBytes, so that one line costs at most a linear pass over
// 64 KiB per pattern however long it is (a 1 MB line of JSON, a progress bar without newlines).
inline constexpr size_t kMaxLineBytes = 1 << 16;

// The first pattern that matches anywhere in `line`'s first kMaxLineBytes, or none.
std::optional<LineMatch> match_line(const std::vector<LinePattern>& patterns,
                                    std::string_view line);

// Splits output that arrives in reads of any size into lines at '\n', each cut at kMaxLineBytes
// (the rest of a longer line is dropped), the partial last line carried to the next read, so
// that a line, and a pattern's literal in it, split across reads is still one line.
class LineSplitter {
 public:
  // Calls fn(line, at) for each line that ends in `chunk`, in order, until fn returns false:
  // `at` is where the line begins in `chunk` when it lies there whole (line is then a view of
  // chunk), npos when it began in an earlier read (a view of the carried copy, valid during the
  // call). What follows the last '\n' is carried, up to kMaxLineBytes.
  template <class Fn>
  void feed(std::string_view chunk, Fn&& fn) {
    size_t start = 0;
    for (size_t nl; (nl = chunk.find('\n', start)) != std::string_view::npos;) {
      bool more = true;
      if (carry_.empty()) {
        more = fn(chunk.substr(start, std::min(nl - start, kMaxLineBytes)), start);
      } else {
        carry(chunk.substr(start, nl - start));
        more = fn(std::string_view(carry_), std::string_view::npos);
        carry_.clear();
      }
      start = nl + 1;
      if (!more) break;
    }
    carry(chunk.substr(start));
  }

 private:
  void carry(std::string_view more) {
    if (carry_.size() < kMaxLineBytes) carry_.append(more.substr(0, kMaxLineBytes - carry_.size()));
  }

  std::string carry_;
};

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
