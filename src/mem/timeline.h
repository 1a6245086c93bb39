// Allocated, active and reserved bytes after every event of a trace, and the free space inside
// the reserved segments at any event. Conventions of PyTorch's allocator statistics
// (c10/cuda/CUDACachingAllocator.h, DeviceStats): "allocated" is what the program holds (down at
// free_requested), "active" also counts blocks freed but still waiting for their streams (down at
// free_completed), "reserved" is the segments taken from the driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mem/address_map.h"
#include "mem/trace.h"

namespace plumb::mem {

struct Sample {
  uint64_t allocated = 0;
  uint64_t active = 0;
  uint64_t reserved = 0;

  bool operator==(const Sample&) const = default;
};

// The samples of a timeline, one per event, in 16 bytes each while every counter fits in 40 bits
// (1 TiB; three of them packed in two words) and in 24 once one does not: the first value that
// does not fit widens every sample kept so far, so a number is never cut. A 2 GB snapshot holds
// ~34 million events; 8 bytes less per event is 270 MB of the "peak RSS below 2 GB" (issue 14).
class Samples {
 public:
  static constexpr int kPackedBits = 40;
  static constexpr uint64_t kPackedMax = (uint64_t{1} << kPackedBits) - 1;

  class Iterator {
   public:
    using value_type = Sample;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;
    Iterator(const Samples* s, size_t i) : s_(s), i_(i) {}
    Sample operator*() const { return (*s_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    Iterator operator++(int) { return {s_, i_++}; }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const Samples* s_ = nullptr;
    size_t i_ = 0;
  };

  // Room for `n` packed samples, backed by huge pages where the kernel allows.
  void reserve(size_t n);
  void push_back(const Sample& s) {
    if (!wide_ && fits(s)) {
      packed_.push_back({s.allocated | s.active << kPackedBits,
                         s.active >> (64 - kPackedBits) | s.reserved << (2 * kPackedBits - 64)});
    } else {
      push_back_wide(s);
    }
  }
  size_t size() const { return wide_ ? wide_samples_.size() : packed_.size(); }
  bool empty() const { return size() == 0; }
  Sample operator[](size_t i) const { return wide_ ? wide_samples_[i] : unpack(packed_[i]); }
  Sample back() const { return (*this)[size() - 1]; }
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }
  // Whether the samples are kept in 24 bytes (a counter reached 2^40 bytes).
  bool wide() const { return wide_; }
  size_t bytes_per_sample() const { return wide_ ? sizeof(Sample) : sizeof(Packed); }

  // The same values, whichever the form.
  bool operator==(const Samples& o) const;

 private:
  struct Packed {
    uint64_t lo;  // allocated, then the low 24 bits of active
    uint64_t hi;  // the high 16 bits of active, then reserved
  };
  static_assert(sizeof(Packed) == 16);

  static bool fits(const Sample& s) { return (s.allocated | s.active | s.reserved) <= kPackedMax; }
  static Sample unpack(const Packed& p) {
    return {p.lo & kPackedMax,
            (p.lo >> kPackedBits | p.hi << (64 - kPackedBits)) & kPackedMax,
            p.hi >> (2 * kPackedBits - 64)};
  }
  void push_back_wide(const Sample& s);

  std::vector<Packed> packed_;
  std::vector<Sample> wide_samples_;
  bool wide_ = false;
};

struct Timeline {
  Samples samples;              // after each event, one per event
  Sample initial;               // before the first event: what the trace's ring buffer dropped
  Sample peak;                  // each the maximum over the trace (initial included)
  size_t peak_allocated_index = 0;
  size_t peak_reserved_index = 0;
  uint64_t dropped_frees = 0;   // frees of blocks allocated before the trace began

  bool operator==(const Timeline&) const = default;
};

// One pass over the events. Blocks the trace frees without having allocated them, and blocks
// still allocated in the final segments that the trace never allocated, were there before the
// first event (the ring buffer dropped their allocation): they make the initial state.
Timeline build_timeline(const Trace& trace);

// A timeline's start without its samples (Timeline::initial and ::dropped_frees): what plumb mem
// replay's check needs of the recorded trace, a third of build_timeline's work and none of its
// memory.
struct TraceStart {
  Sample initial;
  uint64_t dropped_frees = 0;
};
TraceStart trace_start(const Trace& trace);

// The reserved bytes after event `e` from `reserved` before it, as the timeline counts them (only
// segment events change them; a free of more than there is leaves 0).
inline uint64_t reserved_after(const Event& e, uint64_t reserved) {
  switch (e.action) {
    case Action::kSegmentAlloc:
    case Action::kSegmentMap: return reserved + e.size;
    case Action::kSegmentFree:
    case Action::kSegmentUnmap: return reserved > e.size ? reserved - e.size : 0;
    default: return reserved;
  }
}

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

// The largest contiguous free range in any one segment after each event, one value per event:
// the same layout and sweep as free_space_before (series[i] == free_space_before(t, i + 1)
// .largest_free_block), kept up to date in one pass. A change to a segment's blocks re-sweeps
// that segment only; the largest per segment sit in one ordered multiset, so the value after an
// event costs O(blocks in the touched segment + log segments). For the memory page's chart of a
// fragmentation OOM (docs/mem-report.md): the largest block falling under the request while the
// free total stays above it.
std::vector<uint64_t> largest_free_block_series(const Trace& trace);

// The addresses of the trace's workspace blocks (torch_npu's kWorkspaceSnapshot events).
AddressSet workspace_blocks(const Trace& t);

// Whether the trace says when frees complete (kFreeCompleted events).
bool has_completions(const Trace& t);

// a − b, or 0 where b ≥ a.
inline uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

}  // namespace plumb::mem
