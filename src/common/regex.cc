#include "common/regex.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include "common/error.h"

namespace plumb {
namespace {

RE2::Options options(bool ignore_case) {
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingLatin1);
  o.set_log_errors(false);
  o.set_max_mem(Regex::kMaxMemory);
  o.set_case_sensitive(!ignore_case);
  return o;
}

}  // namespace

Regex::Regex(std::string_view pattern, std::string_view what, bool ignore_case)
    : pattern_(pattern) {
  auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()),
                                        options(ignore_case));
  if (!re->ok()) {
    throw Error(fmt::format("{} '{}': not a valid regular expression ({})", what, pattern,
                            re->error()));
  }
  re_ = std::move(re);
}

Regex::~Regex() = default;

int Regex::captures() const { return re_->NumberOfCapturingGroups(); }

bool Regex::search(std::string_view text) const { return run(text, false, {}); }

bool Regex::search(std::string_view text, std::span<std::string_view> groups) const {
  return run(text, false, groups);
}

bool Regex::match(std::string_view text) const { return run(text, true, {}); }

bool Regex::match(std::string_view text, std::span<std::string_view> groups) const {
  return run(text, true, groups);
}

bool Regex::run(std::string_view text, bool anchored, std::span<std::string_view> groups) const {
  constexpr size_t kMaxGroups = 16;
  re2::StringPiece found[kMaxGroups];
  const size_t n = std::min({groups.size(), kMaxGroups,
                             static_cast<size_t>(re_->NumberOfCapturingGroups()) + 1});
  const re2::StringPiece piece(text.data(), text.size());
  if (!re_->Match(piece, 0, piece.size(), anchored ? RE2::ANCHOR_BOTH : RE2::UNANCHORED, found,
                  static_cast<int>(n))) {
    return false;
  }
  for (size_t k = 0; k < groups.size(); ++k) {
    groups[k] = k < n && found[k].data() != nullptr ? std::string_view(found[k].data(), found[k].size())
                                                    : std::string_view();
  }
  return true;
}

}  // namespace plumb
