// Regular expressions for every pattern a user or a file gives plumb: RE2, whose matching is
// linear in the text and bounded in memory (docs/patterns.md). std::regex recurses once per
// character and backtracks exponentially — one long output line, or a pattern like '(a+)+b',
// overflows the stack or spins for minutes — so it is never used on input.
//
// Syntax: RE2's (https://github.com/google/re2/wiki/Syntax), which is ECMAScript's and Perl's
// without backreferences and lookaround; those are refused when the pattern is compiled, with
// RE2's reason. Text is matched as bytes (Latin-1), as std::regex on char did: a log line that is
// not valid UTF-8 still matches, and a UTF-8 literal in a pattern matches its own bytes.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace plumb {

class Regex {
 public:
  // The memory one compiled pattern may use, its DFA caches included: RE2's default. A pattern
  // too large for it is refused; a text whose DFA would need more is matched by RE2's NFA, slower
  // but still linear.
  static constexpr int64_t kMaxMemory = 8 << 20;

  // `what` names the pattern in the error: "--progress-regex '(?=x)': not a valid regular
  // expression (invalid perl operator: (?=)", a plumb::Error with exit code 2.
  explicit Regex(std::string_view pattern, std::string_view what = "pattern",
                 bool ignore_case = false);
  Regex(const Regex&) = default;
  Regex& operator=(const Regex&) = default;
  Regex(Regex&&) noexcept = default;
  Regex& operator=(Regex&&) noexcept = default;
  ~Regex();

  // The leftmost match anywhere in `text` (std::regex_search). With `groups`: groups[0] is the
  // whole match and groups[k] the k-th capture, as far as `groups` reaches; a capture that took
  // no part in the match is an empty view whose data() is nullptr.
  bool search(std::string_view text) const;
  bool search(std::string_view text, std::span<std::string_view> groups) const;
  // The whole of `text` (std::regex_match).
  bool match(std::string_view text) const;
  bool match(std::string_view text, std::span<std::string_view> groups) const;

  int captures() const;  // the number of capturing groups
  const std::string& pattern() const { return pattern_; }

 private:
  bool run(std::string_view text, bool anchored, std::span<std::string_view> groups) const;

  std::string pattern_;
  std::shared_ptr<const re2::RE2> re_;  // immutable and thread-safe: copies share it
};

}  // namespace plumb
