// The rank a trace file's name says, for traces without distributedInfo.
#include <cctype>
#include <string>
#include <string_view>

#include "step/readers.h"

namespace plumb::step {

// "rank" (any case, not preceded by a letter), an optional '-' or '_', then the digits:
// "rank-3.json", "trace_rank_3.json", "rank3_ascend_pt". The first such place wins.
int rank_from_file_name(std::string_view file_name) {
  constexpr std::string_view kWord = "rank";
  constexpr int kMaxDigits = 9;  // fits an int
  std::string lower(file_name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (size_t at = lower.find(kWord); at != std::string::npos; at = lower.find(kWord, at + 1)) {
    if (at > 0 && std::isalpha(static_cast<unsigned char>(lower[at - 1])) != 0) continue;
    size_t digits = at + kWord.size();
    if (digits < lower.size() && (lower[digits] == '-' || lower[digits] == '_')) ++digits;
    size_t end = digits;
    while (end < lower.size() && std::isdigit(static_cast<unsigned char>(lower[end])) != 0) ++end;
    if (end == digits || end - digits > kMaxDigits) continue;
    return std::stoi(lower.substr(digits, end - digits));
  }
  return -1;
}

}  // namespace plumb::step
