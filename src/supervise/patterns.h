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

struct LinePattern {
  std::string name;      // "megatron", "nccl-error", or "--progress-regex"
  std::string literal;   // a substring every match contains; empty: try the regex on every line
  std::regex regex;      // group 1, when present, is the step number (progress patterns)
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

}  // namespace plumb::supervise
