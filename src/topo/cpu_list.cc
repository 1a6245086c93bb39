#include "topo/cpu_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::topo {
namespace {

using CpuRange = std::pair<int, int>;

// One CPU index: digits only, at most kMaxCpu.
bool parse_index(std::string_view text, int& out) {
  if (text.empty() || text.size() > 5) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= 0 && out <= kMaxCpu;
}

// "8" or "10-11" (first ≤ last).
bool parse_range(std::string_view item, CpuRange& out) {
  const size_t dash = item.find('-');
  if (dash == std::string_view::npos) {
    if (!parse_index(item, out.first)) return false;
    out.second = out.first;
    return true;
  }
  return parse_index(item.substr(0, dash), out.first) &&
         parse_index(item.substr(dash + 1), out.second) && out.first <= out.second;
}

// Ranges sorted and merged, so that filling the set touches each CPU once.
std::vector<CpuRange> merged(std::vector<CpuRange> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<CpuRange> out;
  for (const CpuRange& r : ranges) {
    if (!out.empty() && r.first <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

std::string format_cpu_list(const CpuSet& cpus) {
  std::vector<std::string> items;
  for (auto it = cpus.begin(); it != cpus.end();) {
    const int first = *it;
    int last = first;
    for (++it; it != cpus.end() && *it == last + 1; ++it) last = *it;
    items.push_back(first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
  }
  return join(items, ",");
}

CpuSet parse_cpu_list(std::string_view text, std::string_view what) {
  std::vector<CpuRange> ranges;
  for (const std::string& item : split_list(text)) {
    CpuRange r;
    if (!parse_range(item, r)) {
      throw Error(fmt::format("{}: expected a CPU list such as 0-3,8 (indices up to {}), got '{}'",
                              what, kMaxCpu, text));
    }
    ranges.push_back(r);
  }
  CpuSet cpus;
  for (const CpuRange& r : merged(std::move(ranges))) {
    for (int cpu = r.first; cpu <= r.second; ++cpu) cpus.insert(cpus.end(), cpu);
  }
  return cpus;
}

}  // namespace plumb::topo
