// Allocated, active and reserved bytes after every event of a trace, and the free space inside
// the reserved segments at any event. Conventions of PyTorch's allocator statistics
// (c10/cuda/CUDACachingAllocator.h, DeviceStats): "allocated" is what the program holds (down at
// free_requested), "active" also counts blocks freed but still waiting for their streams (down at
// free_completed), "reserved" is the segments taken from the driver.
#pragma once

#include <cstdint>
#include <vector>

#include "mem/trace.h"

namespace plumb::mem {

struct Sample {
  uint64_t allocated = 0;
  uint64_t active = 0;
  uint64_t reserved = 0;
};

struct Timeline {
  std::vector<Sample> samples;  // after each event, one per event
  Sample initial;               // before the first event: what the trace's ring buffer dropped
  Sample peak;                  // each the maximum over the trace (initial included)
  size_t peak_allocated_index = 0;
  size_t peak_reserved_index = 0;
  uint64_t dropped_frees = 0;   // frees of blocks allocated before the trace began
};

// One pass over the events. Blocks the trace frees without having allocated them, and blocks
// still allocated in the final segments that the trace never allocated, were there before the
// first event (the ring buffer dropped their allocation): they make the initial state.
Timeline build_timeline(const Trace& trace);

struct FreeSpace {
  uint64_t reserved = 0;
  uint64_t allocated = 0;        // live blocks (active ones included) inside the segments
  uint64_t free = 0;             // reserved − live
  uint64_t largest_free_block = 0;
  size_t segments = 0;
};

// The segments and live blocks just before event `index` (index = events.size(): at the end),
// rebuilt by replay: free space and the largest contiguous free range in any one segment.
FreeSpace free_space_before(const Trace& trace, size_t index);

}  // namespace plumb::mem
