#include "comm/rounds.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace plumb::comm {
namespace {

using Key = std::tuple<std::string, std::string, std::string, uint64_t>;

Row median_of(std::vector<const Row*> rounds) {
  std::sort(rounds.begin(), rounds.end(),
            [](const Row* a, const Row* b) { return a->busbw_gbps < b->busbw_gbps; });
  Row row = *rounds[(rounds.size() - 1) / 2];
  if (rounds.size() < 2) return row;
  // Median absolute deviation: one disturbed round moves it little, unlike the range.
  std::vector<double> deviations;
  for (const Row* r : rounds) deviations.push_back(std::abs(r->busbw_gbps - row.busbw_gbps));
  std::sort(deviations.begin(), deviations.end());
  const double mad = deviations[deviations.size() / 2];
  row.busbw_spread = row.busbw_gbps > 0 ? mad / row.busbw_gbps : 0;
  int64_t wrong = -1;
  for (const Row* r : rounds) {
    if (r->wrong >= 0) wrong = std::max<int64_t>(wrong, 0) + r->wrong;
  }
  row.wrong = wrong;
  return row;
}

}  // namespace

std::vector<Row> combine_rounds(const std::vector<Row>& rows) {
  std::map<Key, std::vector<const Row*>> by_key;
  std::vector<Key> order;
  for (const Row& r : rows) {
    auto [it, fresh] = by_key.try_emplace(Key{r.layer, r.group, r.collective, r.requested_bytes});
    if (fresh) order.push_back(it->first);
    it->second.push_back(&r);
  }
  std::vector<Row> out;
  out.reserve(order.size());
  for (const Key& key : order) out.push_back(median_of(by_key[key]));
  return out;
}

}  // namespace plumb::comm
