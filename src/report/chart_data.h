// What the HTML report's charts draw: per (layer, collective) and data type, the slowest group at
// each requested size -- the lowest busbw and the highest p99 over the layer's groups, the same
// reduction `plumb diff` compares (baseline/diff.cc), since the slowest group gates a step.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "comm/result.h"

namespace plumb::report {

struct CurvePoint {
  uint64_t bytes = 0;       // requested size
  double busbw_gbps = 0;    // lowest over groups; NaN when no group has one
  std::string busbw_group;  // the group that had it
  // That group's busbw spread over the rounds (comm::Row::busbw_spread: the rounds' median
  // absolute deviation relative to their median); NaN when measured once.
  double busbw_spread = std::numeric_limits<double>::quiet_NaN();
  double p99_us = 0;        // highest over groups; NaN when unknown (imported logs)
  std::string p99_group;
  int groups = 0;  // rows reduced into this point
};

// One data type's points, by size.
struct Curve {
  std::string dtype;
  std::vector<CurvePoint> points;
};

struct ChartData {
  std::string layer;
  std::string collective;
  std::vector<Curve> a;  // by data type
  std::vector<Curve> b;  // empty with one baseline
};

// One entry per (layer, collective) in the order first seen in `a`, then in `b` (may be null).
// One sort per record; no row is copied.
std::vector<ChartData> chart_data(const std::vector<comm::Row>& a, const std::vector<comm::Row>* b);

}  // namespace plumb::report
