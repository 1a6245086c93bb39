// Sets of time intervals [start, end) in integer ns: the union, intersection and difference the
// step breakdown is defined with (docs/step.md). Pure functions over sorted, disjoint lists.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace plumb::step {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;
};

// Sorted, disjoint, non-empty intervals.
using IntervalSet = std::vector<Interval>;

// The union of any intervals (sorts a copy; empty ones dropped).
IntervalSet unite(std::vector<Interval> intervals);

// A ∩ B and A \ B of two sets; A ∪ B of two sets.
IntervalSet intersect(const IntervalSet& a, const IntervalSet& b);
IntervalSet subtract(const IntervalSet& a, const IntervalSet& b);
IntervalSet unite(const IntervalSet& a, const IntervalSet& b);

// Each interval clipped to [start, end).
IntervalSet clip(const IntervalSet& set, int64_t start, int64_t end);

// Σ (end − start).
int64_t length(const IntervalSet& set);

// |[start, end) ∩ set| without building the intersection; `set` sorted.
int64_t overlap_length(const IntervalSet& set, int64_t start, int64_t end);

}  // namespace plumb::step
