#include "comm/result.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace plumb::comm {

std::vector<Summary> summarize(const Result& result) { return summarize(result.rows); }

std::vector<Summary> summarize(const std::vector<Row>& rows) {
  // (layer, collective) -> group -> (sum of busbw, sizes counted), in first-seen order.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::pair<double, int>>> acc;
  for (const Row& row : rows) {
    const auto key = std::make_pair(row.layer, row.collective);
    if (!acc.contains(key)) order.push_back(key);
    auto& groups = acc[key];
    if (row.requested_bytes < kSummaryMinBytes) {
      groups.try_emplace(row.group, 0.0, 0);
      continue;
    }
    auto& [sum, n] = groups[row.group];
    sum += row.busbw_gbps;
    ++n;
  }
  std::vector<Summary> out;
  for (const auto& key : order) {
    Summary s{key.first, key.second, 0, 0, 0, "", 0, 0};
    double best = 0;
    double total = 0;
    int counted_groups = 0;
    for (const auto& [group, acc_group] : acc[key]) {
      const auto& [sum, n] = acc_group;
      if (n == 0) continue;
      const double avg = sum / n;
      s.sizes = std::max(s.sizes, n);
      total += avg;
      ++counted_groups;
      best = std::max(best, avg);
      if (s.slowest_group.empty() || avg < s.slowest_busbw_gbps) {
        s.slowest_group = group;
        s.slowest_busbw_gbps = avg;
      }
    }
    s.groups = counted_groups;
    if (counted_groups > 0) {
      s.avg_busbw_gbps = total / counted_groups;
      s.spread = best > 0 ? (best - s.slowest_busbw_gbps) / best : 0.0;
    }
    out.push_back(s);
  }
  return out;
}

nlohmann::json summary_json(const std::vector<Summary>& summaries) {
  nlohmann::json out = nlohmann::json::array();
  for (const Summary& s : summaries) {
    out.push_back({{"layer", s.layer}, {"collective", s.collective},
                   {"min_bytes", kSummaryMinBytes}, {"sizes", s.sizes}, {"groups", s.groups},
                   {"avg_busbw_gbps", s.avg_busbw_gbps}, {"slowest_group", s.slowest_group},
                   {"slowest_busbw_gbps", s.slowest_busbw_gbps}, {"spread", s.spread}});
  }
  return out;
}

int64_t total_wrong(const Result& result) {
  int64_t total = 0;
  for (const Row& row : result.rows) total += std::max<int64_t>(0, row.wrong);
  return total;
}

void to_json(nlohmann::json& j, const Row& row) {
  j = nlohmann::json{
      {"layer", row.layer},
      {"group", row.group},
      {"group_ranks", row.group_ranks},
      {"collective", row.collective},
      {"dtype", row.dtype},
      {"op", row.op},
      {"root", row.root},
      {"requested_bytes", row.requested_bytes},
      {"bytes", row.bytes},
      {"count", row.count},
      {"time_us", row.time_us},
      {"algbw_gbps", row.algbw_gbps},
      {"busbw_gbps", row.busbw_gbps},
      {"wrong", row.wrong < 0 ? nlohmann::json(nullptr) : nlohmann::json(row.wrong)},
      {"p50_us", row.p50_us},
      {"p99_us", row.p99_us},
      {"max_us", row.max_us},
      {"straggler_rank", row.straggler},
      {"straggler_share", row.straggler_share},
      {"busbw_spread", std::isnan(row.busbw_spread) ? nlohmann::json(nullptr)
                                                     : nlohmann::json(row.busbw_spread)},
  };
}

void from_json(const nlohmann::json& j, Row& row) {
  j.at("layer").get_to(row.layer);
  j.at("group").get_to(row.group);
  j.at("group_ranks").get_to(row.group_ranks);
  j.at("collective").get_to(row.collective);
  j.at("dtype").get_to(row.dtype);
  j.at("op").get_to(row.op);
  j.at("root").get_to(row.root);
  j.at("requested_bytes").get_to(row.requested_bytes);
  j.at("bytes").get_to(row.bytes);
  j.at("count").get_to(row.count);
  j.at("time_us").get_to(row.time_us);
  j.at("algbw_gbps").get_to(row.algbw_gbps);
  j.at("busbw_gbps").get_to(row.busbw_gbps);
  row.wrong = j.at("wrong").is_null() ? -1 : j.at("wrong").get<int64_t>();
  // Unknown (imported from a tool that has no such figure): null in JSON, NaN here.
  for (auto [key, field] : {std::pair{"p50_us", &row.p50_us}, std::pair{"p99_us", &row.p99_us},
                            std::pair{"max_us", &row.max_us}}) {
    const auto& v = j.at(key);
    *field = v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
  }
  j.at("straggler_rank").get_to(row.straggler);
  j.at("straggler_share").get_to(row.straggler_share);
  // Optional: records written before --rounds existed have no such field.
  const auto spread = j.find("busbw_spread");
  row.busbw_spread = spread == j.end() || spread->is_null()
                         ? std::numeric_limits<double>::quiet_NaN()
                         : spread->get<double>();
}

}  // namespace plumb::comm
