#include "report/comm_summary_text.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "common/stats.h"

namespace plumb::report {
namespace {

using Key = std::pair<std::string, std::string>;  // (layer, collective)

// The average of `key`, NaN when the record has no size ≥ 1 MiB of it (or not the key at all).
double average_of(const std::vector<comm::Summary>& summaries, const Key& key) {
  for (const comm::Summary& s : summaries) {
    if (s.layer == key.first && s.collective == key.second) {
      return s.sizes > 0 ? s.avg_busbw_gbps : kNaN;
    }
  }
  return kNaN;
}

std::vector<Key> keys_of(const std::vector<comm::Summary>& a, const std::vector<comm::Summary>& b) {
  std::vector<Key> keys;
  for (const auto* list : {&a, &b}) {
    for (const comm::Summary& s : *list) {
      Key key{s.layer, s.collective};
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
    }
  }
  return keys;
}

}  // namespace

std::string average_busbw_text(double gbps) {
  return std::isnan(gbps) ? std::string("-") : fmt::format("{:.2f}", gbps);
}

void print_average_busbw(const std::vector<comm::Summary>& a, const std::vector<comm::Summary>& b,
                         std::ostream& out) {
  const std::vector<Key> keys = keys_of(a, b);
  if (keys.empty()) return;
  fmt::print(out, "# avg busbw (GB/s): each group's mean over the sizes ≥ 1 MiB, then the mean "
                  "over the layer's groups\n");
  fmt::print(out, "{:<7} {:<14} {:>9} {:>9} {:>8}\n", "layer", "collective", "avg A", "avg B",
             "change");
  for (const Key& key : keys) {
    const double va = average_of(a, key);
    const double vb = average_of(b, key);
    const double change = va > 0 && !std::isnan(vb) ? (vb - va) / va : kNaN;
    fmt::print(out, "{:<7} {:<14} {:>9} {:>9} {:>8}\n", key.first, key.second,
               average_busbw_text(va), average_busbw_text(vb),
               std::isnan(change) ? std::string("-") : fmt::format("{:+.1f}%", 100 * change));
  }
}

}  // namespace plumb::report
