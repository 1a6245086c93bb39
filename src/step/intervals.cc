#include "step/intervals.h"

#include <algorithm>

namespace plumb::step {

IntervalSet unite(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  IntervalSet out;
  for (const Interval& i : intervals) {
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

IntervalSet unite(const IntervalSet& a, const IntervalSet& b) {
  std::vector<Interval> all;
  all.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(all),
             [](const Interval& x, const Interval& y) { return x.start < y.start; });
  return unite(std::move(all));
}

IntervalSet intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t start = std::max(a[i].start, b[j].start);
    int64_t end = std::min(a[i].end, b[j].end);
    if (start < end) out.push_back({start, end});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

IntervalSet subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t j = 0;
  for (Interval piece : a) {
    while (j < b.size() && b[j].end <= piece.start) ++j;
    size_t k = j;
    while (k < b.size() && b[k].start < piece.end) {
      if (b[k].start > piece.start) out.push_back({piece.start, b[k].start});
      piece.start = std::max(piece.start, b[k].end);
      ++k;
    }
    if (piece.start < piece.end) out.push_back(piece);
  }
  return out;
}

IntervalSet clip(const IntervalSet& set, int64_t start, int64_t end) {
  IntervalSet out;
  auto first = std::lower_bound(set.begin(), set.end(), start,
                                [](const Interval& i, int64_t t) { return i.end <= t; });
  for (auto it = first; it != set.end() && it->start < end; ++it) {
    Interval piece{std::max(it->start, start), std::min(it->end, end)};
    if (piece.start < piece.end) out.push_back(piece);
  }
  return out;
}

int64_t length(const IntervalSet& set) {
  int64_t total = 0;
  for (const Interval& i : set) total += i.end - i.start;
  return total;
}

int64_t overlap_length(const IntervalSet& set, int64_t start, int64_t end) {
  int64_t total = 0;
  auto first = std::lower_bound(set.begin(), set.end(), start,
                                [](const Interval& i, int64_t t) { return i.end <= t; });
  for (auto it = first; it != set.end() && it->start < end; ++it) {
    total += std::min(it->end, end) - std::max(it->start, start);
  }
  return total;
}

}  // namespace plumb::step
