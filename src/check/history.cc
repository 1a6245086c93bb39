#include "check/history.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace plumb::check {

std::vector<Offender> repeat_offenders(std::span<const baseline::CheckEntry> passes, int k, int n) {
  std::map<std::string, int> runs;                                 // host -> passes looked at
  std::map<std::pair<std::string, std::string>, int> failures;     // (host, check) -> count
  for (const baseline::CheckEntry& pass : passes) {
    if (pass.kind != "node") continue;
    int& seen = runs[pass.host];
    if (seen >= n) continue;
    ++seen;
    for (const std::string& check : pass.failing) ++failures[{pass.host, check}];
  }
  std::vector<Offender> out;
  for (const auto& [key, count] : failures) {
    if (count >= k) out.push_back({key.first, key.second, count, runs[key.first]});
  }
  std::sort(out.begin(), out.end(), [](const Offender& a, const Offender& b) {
    if (a.host != b.host) return a.host < b.host;
    if (a.failed != b.failed) return a.failed > b.failed;
    return a.check < b.check;
  });
  return out;
}

std::string describe(const Offender& o) {
  return fmt::format("{} failed {} in {} of its last {} runs", o.host, o.check, o.failed, o.runs);
}

}  // namespace plumb::check
