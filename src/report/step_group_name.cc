#include "report/step_group_name.h"

#include <algorithm>
#include <cctype>

namespace plumb::report {
namespace {

constexpr size_t kMinHashDigits = 16;  // PyTorch's hashed names are SHA-1 hex (40 digits)

bool all_of(std::string_view s, int (*is)(int)) {
  return std::all_of(s.begin(), s.end(),
                     [is](char c) { return is(static_cast<unsigned char>(c)) != 0; });
}

bool is_world(std::vector<int> ranks, int world_size) {
  if (world_size <= 0 || ranks.size() != static_cast<size_t>(world_size)) return false;
  std::sort(ranks.begin(), ranks.end());
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] != static_cast<int>(i)) return false;
  }
  return true;
}

}  // namespace

bool made_up_group_name(std::string_view group) {
  if (group.empty()) return false;
  if (all_of(group, isdigit) || group.find('%') != std::string_view::npos) return true;
  return group.size() >= kMinHashDigits && all_of(group, isxdigit);
}

std::string group_role(const std::string& group, const std::vector<int>& ranks, int world_size) {
  if (!group.empty() && !made_up_group_name(group)) return group;
  if (is_world(ranks, world_size)) return "world";
  return ranks.empty() ? "" : "ranks";
}

}  // namespace plumb::report
