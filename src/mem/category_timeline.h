// Live bytes by category after every event: the stacked areas of `plumb mem report`'s memory
// timeline. The same bookkeeping as the timeline's "allocated" (timeline.h): an allocation adds
// its size to the category of its stack at `alloc`, and takes it off at `free_requested`; what
// was live before the first event (Timeline::initial) is the category "before the trace" and
// shrinks as the trace frees it. So at every event the categories add up to Sample::allocated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mem/categories.h"
#include "mem/timeline.h"
#include "mem/trace.h"

namespace plumb::mem {

inline constexpr const char* kBeforeTheTrace = "before the trace";

struct CategoryTimeline {
  // "before the trace" first (the bottom of the stack), then kCategories in order, then any other
  // category the rules named, in the order the trace first used it.
  std::vector<std::string> categories;
  std::vector<std::vector<uint64_t>> bytes;  // [category][event]: live just after the event

  // Σ over the categories at `event`.
  uint64_t total(size_t event) const;
};

// `tl` is build_timeline(t) (its initial state). `c` decides each allocation's category.
CategoryTimeline category_timeline(const Trace& t, const Timeline& tl, const Categorizer& c);

}  // namespace plumb::mem
