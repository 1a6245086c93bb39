#include "mem/timeline.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/huge_pages.h"
#include "mem/address_map.h"

namespace plumb::mem {
namespace {

// Blocks and segments the trace itself allocates, to tell its own frees from those of blocks
// allocated before it began.
struct Seen {
  AddressSet blocks;
  AddressSet segments;
};

Seen seen_in_trace(const Trace& t) {
  Seen s;
  for (const Event& e : t.events) {
    if (e.action == Action::kAlloc) s.blocks.insert(e.addr);
    if (e.action == Action::kSegmentAlloc || e.action == Action::kSegmentMap) s.segments.insert(e.addr);
  }
  return s;
}

// What was there before the first event, in order: a free of a block the trace has not
// allocated (so far) frees one allocated before it; a completion without its request, a block
// already pending; a segment freed without being allocated, one reserved before. Live blocks and
// segments of the end state the replay does not account for were there all along.
Sample initial_state(const Trace& t, const AddressSet& workspace, uint64_t& dropped_frees) {
  Sample s;
  AddressSet alive, pending, segments;
  const bool any_workspace = !workspace.empty();
  for (const Event& e : t.events) {
    switch (e.action) {
      case Action::kAlloc:
        if (!any_workspace || !workspace.contains(e.addr)) alive.insert(e.addr);
        break;
      case Action::kFreeRequested:
        if (!alive.erase(e.addr)) {
          s.allocated += e.size;
          s.active += e.size;
          ++dropped_frees;
        }
        pending.insert(e.addr);
        break;
      case Action::kFreeCompleted:
        if (!pending.erase(e.addr)) s.active += e.size;
        break;
      case Action::kSegmentAlloc:
      case Action::kSegmentMap:
        segments.insert(e.addr);
        break;
      case Action::kSegmentFree:
      case Action::kSegmentUnmap:
        if (!segments.erase(e.addr)) s.reserved += e.size;
        break;
      default:
        break;
    }
  }
  for (const Segment& seg : t.segments) {
    if (!segments.contains(seg.addr)) s.reserved += seg.total_size;
    for (const Block& b : seg.blocks) {
      if (b.state == BlockState::kActiveAllocated && !alive.contains(b.addr)) {
        s.allocated += b.size;
        s.active += b.size;
      } else if (b.state == BlockState::kActivePendingFree && !pending.contains(b.addr) &&
                 !alive.contains(b.addr)) {
        s.active += b.size;
      }
    }
  }
  return s;
}

// Workspace blocks are looked up only in traces that have any (torch_npu's).
void apply(const Event& e, Sample& s, bool has_completions, const AddressSet& workspace,
           bool any_workspace) {
  switch (e.action) {
    case Action::kAlloc:
      if (any_workspace && workspace.contains(e.addr)) break;
      s.allocated += e.size;
      s.active += e.size;
      break;
    case Action::kFreeRequested:
      if (any_workspace && workspace.contains(e.addr)) break;
      s.allocated = minus(s.allocated, e.size);
      if (!has_completions) s.active = minus(s.active, e.size);
      break;
    case Action::kFreeCompleted:
      if (any_workspace && workspace.contains(e.addr)) break;
      s.active = minus(s.active, e.size);
      break;
    default:
      s.reserved = reserved_after(e, s.reserved);
      break;
  }
}

}  // namespace

void Samples::reserve(size_t n) {
  packed_.reserve(n);
  advise_huge_pages(packed_.data(), packed_.capacity() * sizeof(Packed));
}

void Samples::push_back_wide(const Sample& s) {
  if (!wide_) {
    wide_samples_.reserve(std::max(packed_.capacity(), packed_.size() + 1));
    for (const Packed& p : packed_) wide_samples_.push_back(unpack(p));
    std::vector<Packed>().swap(packed_);
    wide_ = true;
  }
  wide_samples_.push_back(s);
}

bool Samples::operator==(const Samples& o) const {
  if (size() != o.size()) return false;
  for (size_t i = 0; i < size(); ++i) {
    if ((*this)[i] != o[i]) return false;
  }
  return true;
}

TraceStart trace_start(const Trace& t) {
  TraceStart start;
  start.initial = initial_state(t, workspace_blocks(t), start.dropped_frees);
  return start;
}

Timeline build_timeline(const Trace& t) {
  Timeline tl;
  const AddressSet workspace = workspace_blocks(t);
  tl.initial = initial_state(t, workspace, tl.dropped_frees);
  const bool completions = has_completions(t);
  tl.samples.reserve(t.events.size());
  Sample s = tl.initial;
  tl.peak = s;
  for (size_t i = 0; i < t.events.size(); ++i) {
    apply(t.events[i], s, completions, workspace, !workspace.empty());
    tl.samples.push_back(s);
    if (s.allocated > tl.peak.allocated) {
      tl.peak.allocated = s.allocated;
      tl.peak_allocated_index = i;
    }
    if (s.reserved > tl.peak.reserved) {
      tl.peak.reserved = s.reserved;
      tl.peak_reserved_index = i;
    }
    tl.peak.active = std::max(tl.peak.active, s.active);
  }
  return tl;
}

namespace {

// The layout before the first event: what the end state holds that the trace never allocated,
// and what the trace frees without having allocated it.
struct Layout {
  std::map<uint64_t, uint64_t> segments;  // addr → size
  AddressMap<uint64_t> live;              // addr → size (active: allocated or pending free)
};

Layout initial_layout(const Trace& t) {
  const Seen seen = seen_in_trace(t);
  Layout l;
  for (const Segment& seg : t.segments) {
    if (!seen.segments.contains(seg.addr)) l.segments[seg.addr] = seg.total_size;
    for (const Block& b : seg.blocks) {
      if (b.state != BlockState::kInactive && !seen.blocks.contains(b.addr)) l.live[b.addr] = b.size;
    }
  }
  for (const Event& e : t.events) {
    const bool block_free = e.action == Action::kFreeRequested || e.action == Action::kFreeCompleted;
    if (block_free && !seen.blocks.contains(e.addr)) l.live[e.addr] = e.size;
    const bool segment_free = e.action == Action::kSegmentFree || e.action == Action::kSegmentUnmap;
    if (segment_free && !seen.segments.contains(e.addr)) l.segments[e.addr] = e.size;
  }
  return l;
}

// What an event does to the layout, as the allocator's statistics count it: a block stays live
// (active) until free_completed when the trace records completions.
enum class Change { kNone, kBlockAdded, kBlockRemoved, kSegmentAdded, kSegmentRemoved };

Change change_of(const Event& e, bool completions) {
  switch (e.action) {
    case Action::kAlloc: return Change::kBlockAdded;
    case Action::kFreeRequested: return completions ? Change::kNone : Change::kBlockRemoved;
    case Action::kFreeCompleted: return Change::kBlockRemoved;
    case Action::kSegmentAlloc:
    case Action::kSegmentMap: return Change::kSegmentAdded;
    case Action::kSegmentFree:
    case Action::kSegmentUnmap: return Change::kSegmentRemoved;
    default: return Change::kNone;
  }
}

// One segment [addr, end) swept along the blocks that start inside it (ascending): its live
// bytes and its largest free range. Blocks starting before it belong to no segment here.
template <class It>
void sweep_segment(uint64_t addr, uint64_t size, It& block, It blocks_end, FreeSpace& f) {
  uint64_t cursor = addr;
  const uint64_t end = addr + size;
  while (block != blocks_end && block->first < end) {
    if (block->first >= addr) {
      f.largest_free_block = std::max(f.largest_free_block, minus(block->first, cursor));
      f.allocated += block->second;
      cursor = std::max(cursor, block->first + block->second);
    }
    ++block;
  }
  f.largest_free_block = std::max(f.largest_free_block, minus(end, cursor));
}

// The layout kept up to date event by event: live blocks in address order, and per segment its
// largest free range, the largest of all read from an ordered multiset.
class FreeRanges {
 public:
  explicit FreeRanges(const Layout& l) {
    l.live.for_each([&](uint64_t addr, uint64_t size) { blocks_[addr] = size; });
    for (const auto& [addr, size] : l.segments) add_segment(addr, size);
  }
  void apply(const Event& e, bool completions) {
    switch (change_of(e, completions)) {
      case Change::kBlockAdded: blocks_[e.addr] = e.size; resweep_at(e.addr); break;
      case Change::kBlockRemoved: if (blocks_.erase(e.addr) > 0) resweep_at(e.addr); break;
      case Change::kSegmentAdded: remove_segment(e.addr); add_segment(e.addr, e.size); break;
      case Change::kSegmentRemoved: remove_segment(e.addr); break;
      case Change::kNone: break;
    }
  }
  uint64_t largest() const { return largest_.empty() ? 0 : *largest_.rbegin(); }

 private:
  struct Seg {
    uint64_t size = 0;
    uint64_t largest = 0;
  };
  uint64_t sweep(uint64_t addr, uint64_t size) const {
    FreeSpace f;
    auto block = blocks_.lower_bound(addr);
    sweep_segment(addr, size, block, blocks_.end(), f);
    return f.largest_free_block;
  }
  void add_segment(uint64_t addr, uint64_t size) {
    const uint64_t l = sweep(addr, size);
    segments_[addr] = {size, l};
    largest_.insert(l);
  }
  void remove_segment(uint64_t addr) {
    const auto it = segments_.find(addr);
    if (it == segments_.end()) return;
    largest_.erase(largest_.find(it->second.largest));
    segments_.erase(it);
  }
  // The segment holding `addr` (the last one starting at or below it), swept again.
  void resweep_at(uint64_t addr) {
    auto it = segments_.upper_bound(addr);
    if (it == segments_.begin()) return;
    --it;
    if (addr - it->first >= it->second.size) return;
    const uint64_t l = sweep(it->first, it->second.size);
    if (l == it->second.largest) return;
    largest_.erase(largest_.find(it->second.largest));
    largest_.insert(l);
    it->second.largest = l;
  }

  std::map<uint64_t, uint64_t> blocks_;  // live blocks: addr → size
  std::map<uint64_t, Seg> segments_;
  std::multiset<uint64_t> largest_;      // each segment's largest free range
};

}  // namespace

FreeSpace free_space_before(const Trace& t, size_t index) {
  Layout l = initial_layout(t);
  const bool completions = has_completions(t);
  for (size_t i = 0; i < std::min(index, t.events.size()); ++i) {
    const Event& e = t.events[i];
    switch (change_of(e, completions)) {
      case Change::kBlockAdded: l.live[e.addr] = e.size; break;
      case Change::kBlockRemoved: l.live.erase(e.addr); break;
      case Change::kSegmentAdded: l.segments[e.addr] = e.size; break;
      case Change::kSegmentRemoved: l.segments.erase(e.addr); break;
      case Change::kNone: break;
    }
  }
  // The live blocks in address order, for one sweep along the segments.
  std::vector<std::pair<uint64_t, uint64_t>> blocks;
  blocks.reserve(l.live.size());
  l.live.for_each([&](uint64_t addr, uint64_t size) { blocks.emplace_back(addr, size); });
  std::sort(blocks.begin(), blocks.end());
  FreeSpace f;
  f.segments = l.segments.size();
  auto block = blocks.begin();
  for (const auto& [addr, size] : l.segments) {
    f.reserved += size;
    sweep_segment(addr, size, block, blocks.end(), f);
  }
  f.free = minus(f.reserved, f.allocated);
  return f;
}

std::vector<uint64_t> largest_free_block_series(const Trace& t) {
  FreeRanges ranges(initial_layout(t));
  const bool completions = has_completions(t);
  std::vector<uint64_t> series;
  series.reserve(t.events.size());
  for (const Event& e : t.events) {
    ranges.apply(e, completions);
    series.push_back(ranges.largest());
  }
  return series;
}

AddressSet workspace_blocks(const Trace& t) {
  AddressSet w;
  for (const Event& e : t.events) {
    if (e.action == Action::kWorkspaceSnapshot) w.insert(e.addr);
  }
  return w;
}

bool has_completions(const Trace& t) {
  return std::any_of(t.events.begin(), t.events.end(),
                     [](const Event& e) { return e.action == Action::kFreeCompleted; });
}

}  // namespace plumb::mem
