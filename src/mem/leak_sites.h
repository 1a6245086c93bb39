// Behind a leak verdict: which allocation sites grew. The live bytes of every call stack are
// sampled at the start of each step; a site whose live bytes rise step after step (least-squares
// slope over the steps) is where the baseline creep comes from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mem/steps.h"
#include "mem/trace.h"

namespace plumb::mem {

struct LeakSite {
  uint32_t stack = kNoStack;      // index into Trace::stacks (kNoStack: allocations without one)
  std::string where;              // "function (file:line)" of the innermost frames, for reports
  double bytes_per_step = 0;      // least-squares slope of its live bytes at step starts
  uint64_t live_first = 0;        // live bytes at the first sampled step start
  uint64_t live_last = 0;         // and at the last
  uint64_t allocations_live = 0;  // live allocations from this site at the last sample

  bool operator==(const LeakSite&) const = default;
};

// Sites whose live bytes grew by at least `min_rise` bytes over the steps, largest slope first,
// at most `limit`. Needs three step starts or more; fewer gives nothing.
std::vector<LeakSite> growing_sites(const Trace& t, const Steps& steps, uint64_t min_rise,
                                    size_t limit = 5);

// "f (file.py:12) < g (file.py:40)": the innermost `depth` frames of a stack.
std::string describe_stack(const Trace& t, uint32_t stack, size_t depth = 3);

}  // namespace plumb::mem
