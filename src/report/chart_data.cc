#include "report/chart_data.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>
#include <utility>

#include "common/stats.h"

namespace plumb::report {
namespace {

using ChartKey = std::pair<std::string_view, std::string_view>;

// (layer, collective) -> index in the output, in first-seen order.
void index_charts(const std::vector<comm::Row>& rows, std::map<ChartKey, size_t>& index,
                  std::vector<ChartData>& charts) {
  for (const comm::Row& row : rows) {
    const auto [it, fresh] = index.try_emplace(ChartKey{row.layer, row.collective}, charts.size());
    if (fresh) charts.push_back({row.layer, row.collective, {}, {}});
  }
}

struct Ref {
  size_t chart;
  const comm::Row* row;
};

bool before(const Ref& x, const Ref& y) {
  if (x.chart != y.chart) return x.chart < y.chart;
  if (x.row->dtype != y.row->dtype) return x.row->dtype < y.row->dtype;
  return x.row->requested_bytes < y.row->requested_bytes;
}

void reduce_into(CurvePoint& p, const comm::Row& row) {
  if (!std::isnan(row.busbw_gbps) && (std::isnan(p.busbw_gbps) || row.busbw_gbps < p.busbw_gbps)) {
    p.busbw_gbps = row.busbw_gbps;
    p.busbw_group = row.group;
    p.busbw_spread = row.busbw_spread;
  }
  if (!std::isnan(row.p99_us) && (std::isnan(p.p99_us) || row.p99_us > p.p99_us)) {
    p.p99_us = row.p99_us;
    p.p99_group = row.group;
  }
  ++p.groups;
}

void add_curves(const std::vector<comm::Row>& rows, const std::map<ChartKey, size_t>& index,
                std::vector<ChartData>& charts, bool into_b) {
  std::vector<Ref> refs;
  refs.reserve(rows.size());
  for (const comm::Row& row : rows) refs.push_back({index.at({row.layer, row.collective}), &row});
  std::sort(refs.begin(), refs.end(), before);
  for (const Ref& r : refs) {
    std::vector<Curve>& curves = into_b ? charts[r.chart].b : charts[r.chart].a;
    if (curves.empty() || curves.back().dtype != r.row->dtype) curves.push_back({r.row->dtype, {}});
    std::vector<CurvePoint>& points = curves.back().points;
    if (points.empty() || points.back().bytes != r.row->requested_bytes) {
      points.push_back({r.row->requested_bytes, kNaN, "", kNaN, kNaN, "", 0});
    }
    reduce_into(points.back(), *r.row);
  }
}

}  // namespace

std::vector<ChartData> chart_data(const std::vector<comm::Row>& a,
                                  const std::vector<comm::Row>* b) {
  std::map<ChartKey, size_t> index;
  std::vector<ChartData> charts;
  index_charts(a, index, charts);
  if (b != nullptr) index_charts(*b, index, charts);
  add_curves(a, index, charts, false);
  if (b != nullptr) add_curves(*b, index, charts, true);
  return charts;
}

}  // namespace plumb::report
