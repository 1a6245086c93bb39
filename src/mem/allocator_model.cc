#include "mem/allocator_model.h"

#include <algorithm>
#include <bit>

namespace plumb::mem {
namespace {

constexpr uint64_t kVirtualSize = uint64_t{1} << 46;  // an expandable segment's address range
constexpr uint64_t kSyntheticBase = uint64_t{1} << 52;
constexpr uint64_t kLargestRequest = uint64_t{1} << 50;  // keeps every rounding free of overflow

// Whether v is a power of two, without std::has_single_bit: without -mpopcnt (the build targets
// every x86-64) that calls libgcc's software popcount, 1% of a replay's instructions.
constexpr bool single_bit(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// The sizes are powers of 2 but for a user's page size: a mask then, not a 64-bit division (a
// rounding per allocation).
uint64_t round_up(uint64_t v, uint64_t to) {
  return single_bit(to) ? (v + to - 1) & ~(to - 1) : (v + to - 1) / to * to;
}
uint64_t round_down(uint64_t v, uint64_t to) {
  return single_bit(to) ? v & ~(to - 1) : v / to * to;
}

}  // namespace

uint64_t round_to_power2_division(uint64_t size, unsigned divisions) {
  if (size == 0 || single_bit(size) || divisions < 2) return size;
  const uint64_t floor = std::bit_floor(size);
  const uint64_t step = floor >> (std::bit_width(divisions) - 1);  // floor / 2^floor(log2 d)
  if (step == 0) return floor << 1;
  const uint64_t down = size & ~(step - 1);
  return down == size ? size : down + step;
}

uint64_t policy_round_size(const AllocatorPolicy& p, uint64_t size) {
  size += p.pad;
  if (size < p.min_block) return p.min_block;
  const unsigned d = p.roundup_power2_divisions;
  if (d > 1 && size > p.min_block * d) return round_to_power2_division(size, d);
  return round_up(size, p.min_block);
}

uint64_t policy_allocation_size(const AllocatorPolicy& p, uint64_t rounded) {
  if (rounded <= p.small_size) return p.small_buffer;
  if (rounded < p.min_large_alloc) return p.large_buffer;
  return round_up(rounded, p.round_large);
}

AllocatorModel::AllocatorModel(AllocatorPolicy policy, uint64_t capacity,
                               std::vector<std::pair<uint64_t, uint64_t>> segment_addresses)
    : policy_(std::move(policy)),
      capacity_(capacity),
      borrowed_(std::move(segment_addresses)),
      synthetic_next_(kSyntheticBase) {
  if (policy_.kind != AllocatorPolicy::Kind::kBestFit) return;
  // One arena as large as the capacity; "reserved" is how far into it blocks reach.
  const uint64_t size = capacity_ == kUnlimited ? kVirtualSize : capacity_;
  segments_.push_back({synthetic_next_, size, false, false, 0});
  segments_[0].tail = new_block({synthetic_next_, size, 0, 0});
  insert_free(segments_[0].tail);
}

// --- blocks and free sets ---------------------------------------------------------------------

AllocatorModel::BlockId AllocatorModel::new_block(const Block& b) {
  BlockId id;
  if (!spare_.empty()) {
    id = spare_.back();
    spare_.pop_back();
    blocks_[id] = b;
  } else {
    id = static_cast<BlockId>(blocks_.size());
    blocks_.push_back(b);
  }
  if (id >= generations_.size()) generations_.resize(id + 1, 0);
  ++generations_[id];
  return id;
}

void AllocatorModel::insert_free(BlockId id) {
  const Block& b = blocks_[id];
  pool(b.small).insert({b.stream, b.size, b.addr, id});
}

void AllocatorModel::erase_free(BlockId id) {
  const Block& b = blocks_[id];
  pool(b.small).erase({b.stream, b.size, b.addr, id});
}

bool AllocatorModel::free_and_mapped(BlockId id) const {
  if (id == kNone) return false;
  const Block& b = blocks_[id];
  return !b.allocated && !b.pending && b.mapped;
}

bool AllocatorModel::pending(BlockId b) const { return blocks_[b].pending; }

uint64_t AllocatorModel::next_segment_address(uint64_t size) {
  if (borrowed_next_ < borrowed_.size() && borrowed_[borrowed_next_].first == size) {
    return borrowed_[borrowed_next_++].second;
  }
  const uint64_t a = synthetic_next_ + kVirtualSize;  // past the best-fit arena, if any
  synthetic_next_ += round_up(size, policy_.round_large);
  return a;
}

// --- malloc -------------------------------------------------------------------------------------

AllocatorModel::BlockId AllocatorModel::allocate(uint64_t size, int64_t stream) {
  if (size > kLargestRequest) return kNoBlock;  // no device has a petabyte
  if (policy_.bucket_divisions > 1) size = round_to_power2_division(size, policy_.bucket_divisions);
  return malloc_rounded(policy_round_size(policy_, size), stream);
}

AllocatorModel::BlockId AllocatorModel::malloc_rounded(uint64_t size, int64_t stream) {
  if (policy_.kind == AllocatorPolicy::Kind::kBestFit) {
    const BlockId b = find_free(false, 0, size);
    if (b == kNone) return kNone;
    const BlockId id = take(b, size);
    refresh_arena_reserved();
    return id;
  }
  const bool small = size <= policy_.small_size;
  auto grow = [&] {
    return policy_.expandable_segments ? grow_expandable(small, stream, size)
                                       : new_segment(small, stream, size);
  };
  BlockId b = find_free(small, stream, size);
  if (b == kNone) {
    if (policy_.gc_threshold > 0 && capacity_ != kUnlimited) collect_garbage();
    b = grow();
    if (b == kNone && release_oversize(small, stream, size)) b = grow();
    if (b == kNone) {
      release_cached();
      ++counters_.cache_flushes;
      b = grow();
    }
    if (b == kNone) return kNone;
  }
  return take(b, size);
}

// get_free_block: the smallest free block of the pool and stream that fits, lowest address on
// ties; max_split_size keeps large cached blocks for large requests.
AllocatorModel::BlockId AllocatorModel::find_free(bool small, int64_t stream, uint64_t size) {
  if (!small) ++large_lookups_;  // garbage collection's clock (get_free_blocks_call_count)
  FreePool& set = pool(small);
  auto it = set.lower_bound({stream, size, 0, 0});
  if (it == set.end() || it->stream != stream) return kNone;
  // In an expandable segment a block's size for best fit is what it could grow to: one next to
  // unmapped pages is passed over for a larger block that cannot grow (get_free_block).
  auto can_grow_to = [&](BlockId b) {
    const BlockId next = blocks_[b].next;
    return blocks_[b].size + (next != kNone && !blocks_[next].mapped ? blocks_[next].size : 0);
  };
  for (auto next = it; segments_[blocks_[it->id].segment].expandable && ++next != set.end() &&
                      next->stream == stream && can_grow_to(next->id) < can_grow_to(it->id);) {
    it = next;
  }
  const uint64_t found = it->size;
  const uint64_t max_split = policy_.max_split_size;
  if (size < max_split && found >= max_split) return kNone;
  if (size >= max_split && found >= size + policy_.large_buffer) return kNone;
  const BlockId id = it->id;
  set.erase(it);
  return id;
}

bool AllocatorModel::should_split(const Block& b, uint64_t size) const {
  const uint64_t remaining = b.size - size;
  if (b.small || policy_.expandable_segments || policy_.kind == AllocatorPolicy::Kind::kBestFit) {
    return remaining >= policy_.min_block;
  }
  return size < policy_.max_split_size && remaining > policy_.small_size;
}

// alloc_found_block: the front of the block serves the request; a remainder returns to the pool.
AllocatorModel::BlockId AllocatorModel::take(BlockId id, uint64_t size) {
  if (should_split(blocks_[id], size)) {
    Block rest = blocks_[id];
    rest.addr += size;
    rest.size -= size;
    rest.prev = id;
    const BlockId r = new_block(rest);
    Block& b = blocks_[id];  // new_block may have moved blocks_
    if (b.next != kNone) blocks_[b.next].prev = r;
    if (segments_[b.segment].tail == id) segments_[b.segment].tail = r;
    b.next = r;
    b.size = size;
    insert_free(r);
  }
  Block& b = blocks_[id];
  b.allocated = true;
  counters_.allocated += b.size;
  counters_.active += b.size;
  return id;
}

AllocatorModel::BlockId AllocatorModel::new_segment(bool small, int64_t stream, uint64_t size) {
  const uint64_t bytes = policy_allocation_size(policy_, size);
  if (capacity_ != kUnlimited && counters_.reserved + bytes > capacity_) return kNone;
  const auto seg = static_cast<uint32_t>(segments_.size());
  const uint64_t addr = next_segment_address(bytes);
  segments_.push_back({addr, bytes, small, false, stream});
  counters_.reserved += bytes;
  ++counters_.segment_allocs;
  Block b{addr, bytes, stream, seg};
  b.small = small;
  segments_[seg].tail = new_block(b);
  return segments_[seg].tail;
}

// --- free ---------------------------------------------------------------------------------------

void AllocatorModel::free(BlockId id, bool deferred) {
  Block& b = blocks_[id];
  if (!b.allocated) return;
  b.allocated = false;
  counters_.allocated -= b.size;
  if (deferred) {
    b.pending = true;
    pending_.push_back(id);
    return;
  }
  return_block(id);
}

void AllocatorModel::complete(BlockId id) {
  if (!blocks_[id].pending) return;
  blocks_[id].pending = false;
  pending_.erase(std::find(pending_.begin(), pending_.end(), id));
  return_block(id);
}

// free_block: merge with free neighbours (mapped with mapped), back into the pool.
void AllocatorModel::return_block(BlockId id) {
  counters_.active -= blocks_[id].size;
  if (free_and_mapped(blocks_[id].prev)) id = merge(blocks_[id].prev, id);
  if (free_and_mapped(blocks_[id].next)) id = merge(id, blocks_[id].next);
  blocks_[id].freed_at = large_lookups_;  // insert_into_blocks resets the age of the merged block
  insert_free(id);
  if (policy_.kind == AllocatorPolicy::Kind::kBestFit) refresh_arena_reserved();
}

// Joins `hi` (the block right after `lo`) into `lo`; either may be in a free set.
AllocatorModel::BlockId AllocatorModel::merge(BlockId lo, BlockId hi) {
  if (!blocks_[lo].allocated && !blocks_[lo].pending) erase_free(lo);
  if (!blocks_[hi].allocated && !blocks_[hi].pending) erase_free(hi);
  unlink(lo, hi);
  return lo;
}

// `hi` joins `lo`: one block, one id fewer.
void AllocatorModel::unlink(BlockId lo, BlockId hi) {
  Block& a = blocks_[lo];
  const Block& b = blocks_[hi];
  a.size += b.size;
  a.next = b.next;
  if (b.next != kNone) blocks_[b.next].prev = lo;
  Segment& s = segments_[a.segment];
  if (s.tail == hi) s.tail = lo;
  spare_.push_back(hi);
}

void AllocatorModel::refresh_arena_reserved() {
  // The arena's free tail starts where the highest block ends.
  const Segment& s = segments_[0];
  const Block& tail = blocks_[s.tail];
  counters_.reserved = tail.allocated || tail.pending ? s.size : tail.addr - s.addr;
}

// --- giving memory back -------------------------------------------------------------------------

// release_cached_blocks: wait for every stream, then return every cached segment that is not
// split (expandable segments: unmap every whole free page), large pool first.
void AllocatorModel::release_cached() {
  while (!pending_.empty()) complete(pending_.back());
  for (const bool small : {false, true}) {
    std::vector<BlockId> whole;
    for (const FreeKey& k : pool(small)) {
      const BlockId id = k.id;
      const Block& b = blocks_[id];
      if (segments_[b.segment].expandable || (b.prev == kNone && b.next == kNone)) whole.push_back(id);
    }
    for (const BlockId id : whole) {
      if (segments_[blocks_[id].segment].expandable) {
        unmap_free(id);
      } else {
        release_whole(id);
      }
    }
  }
}

// cudaFree of the segment a free block covers whole; the block's id returns to the spares.
void AllocatorModel::release_whole(BlockId id) {
  erase_free(id);
  counters_.reserved -= segments_[blocks_[id].segment].size;
  ++counters_.segment_frees;
  spare_.push_back(id);
}

// release_available_cached_blocks (max_split_size set): free one cached oversize segment of the
// stream at least as large as the request, else the largest ones until enough was freed.
bool AllocatorModel::release_oversize(bool small, int64_t stream, uint64_t size) {
  if (policy_.max_split_size == kUnlimited) return false;
  const uint64_t want = std::max(size, policy_.max_split_size);
  std::vector<BlockId> oversize;  // ascending size
  for (const FreeKey& k : pool(small)) {
    const Block& b = blocks_[k.id];
    if (b.stream == stream && b.size >= policy_.max_split_size && b.prev == kNone &&
        b.next == kNone) {
      oversize.push_back(k.id);
    }
  }
  for (const BlockId id : oversize) {
    if (blocks_[id].size >= want) {
      release_whole(id);
      return true;
    }
  }
  uint64_t released = 0;
  for (auto it = oversize.rbegin(); it != oversize.rend() && released < want; ++it) {
    released += blocks_[*it].size;
    release_whole(*it);
  }
  return released >= want;
}

// garbage_collect_cached_blocks: above garbage_collection_threshold × capacity, free whole cached
// large segments that have waited at least the average age (in large-pool lookups), pass after
// pass until under the threshold; a pass does not stop at the target (PyTorch's comment: "Don't
// stop upon reaching the target_size").
void AllocatorModel::collect_garbage() {
  const uint64_t now = large_lookups_;
  const auto threshold = static_cast<uint64_t>(policy_.gc_threshold * static_cast<double>(capacity_));
  if (counters_.reserved <= threshold) return;
  const uint64_t target = counters_.reserved - threshold;
  std::vector<BlockId> freeable;
  double total_age = 0;
  for (const FreeKey& k : pool(false)) {
    const Block& b = blocks_[k.id];
    if (b.prev == kNone && b.next == kNone && !segments_[b.segment].expandable) {
      freeable.push_back(k.id);
      total_age += static_cast<double>(now - b.freed_at);
    }
  }
  uint64_t reclaimed = 0;
  bool freed = true;
  while (reclaimed < target && freed && !freeable.empty()) {
    const double average = total_age / static_cast<double>(freeable.size());
    freed = false;
    for (auto it = freeable.begin(); it != freeable.end();) {
      const Block& b = blocks_[*it];
      const auto age = static_cast<double>(now - b.freed_at);
      if (age < average) {
        ++it;
        continue;
      }
      freed = true;
      reclaimed += b.size;
      total_age -= age;
      release_whole(*it);
      it = freeable.erase(it);
    }
  }
}

// --- expandable segments ------------------------------------------------------------------------

// Expandable segments: one address range per pool and stream; pages (2 MiB small, 20 MiB large)
// are mapped as needed (find_expandable_block, try_allocate_expandable_block): the first unmapped
// range in address order that, with the free mapped blocks around it, covers the request.
AllocatorModel::BlockId AllocatorModel::grow_expandable(bool small, int64_t stream,
                                                        uint64_t size) {
  const uint32_t seg = expandable_segment(small, stream);
  std::vector<BlockId> holes;
  for (BlockId b = segments_[seg].tail; b != kNone; b = blocks_[b].prev) {
    if (!blocks_[b].mapped) holes.push_back(b);
  }
  for (auto u = holes.rbegin(); u != holes.rend(); ++u) {
    const BlockId start = free_and_mapped(blocks_[*u].prev) ? blocks_[*u].prev : *u;
    uint64_t have = 0, to_map = 0;
    for (BlockId b = start; b != kNone && have < size; b = blocks_[b].next) {
      if (free_and_mapped(b)) {
        have += blocks_[b].size;
      } else if (!blocks_[b].mapped) {
        const uint64_t m = std::min(round_up(size - have, page(small)), blocks_[b].size);
        to_map += m;
        have += m;
      } else {
        break;  // held
      }
    }
    if (have < size) continue;
    if (capacity_ != kUnlimited && counters_.reserved + to_map > capacity_) return kNone;
    return map_range(start, size, small);
  }
  return kNone;  // the range is far larger than any device: not reached
}

uint32_t AllocatorModel::expandable_segment(bool small, int64_t stream) {
  for (uint32_t seg = 0; seg < segments_.size(); ++seg) {
    const Segment& s = segments_[seg];
    if (s.expandable && s.small == small && s.stream == stream) return seg;
  }
  const auto seg = static_cast<uint32_t>(segments_.size());
  const uint64_t addr = next_segment_address(kVirtualSize);
  segments_.push_back({addr, kVirtualSize, small, true, stream});
  Block b{addr, kVirtualSize, stream, seg};
  b.small = small;
  b.mapped = false;
  segments_[seg].tail = new_block(b);
  return seg;
}

// From `start` on, joins free mapped blocks and maps the fronts of unmapped ones until `size`
// bytes are one free block (not in a free set): the caller has checked that they suffice.
AllocatorModel::BlockId AllocatorModel::map_range(BlockId start, uint64_t size, bool small) {
  BlockId joined = kNone;
  uint64_t have = 0;
  for (BlockId b = start; have < size;) {
    const BlockId next = blocks_[b].next;
    BlockId piece = b;
    if (free_and_mapped(b)) {
      erase_free(b);
    } else {
      const uint64_t m = std::min(round_up(size - have, page(small)), blocks_[b].size);
      piece = map_front(b, m);
      counters_.reserved += m;
      ++counters_.segment_allocs;
    }
    have += blocks_[piece].size;
    joined = joined == kNone ? piece : merge(joined, piece);
    b = next;
  }
  return joined;
}

// The first `bytes` of an unmapped block become a mapped block of their own.
AllocatorModel::BlockId AllocatorModel::map_front(BlockId u, uint64_t bytes) {
  if (bytes == blocks_[u].size) {
    blocks_[u].mapped = true;
    return u;
  }
  Block mapped = blocks_[u];
  mapped.size = bytes;
  mapped.mapped = true;
  mapped.next = u;
  const BlockId m = new_block(mapped);
  Block& t = blocks_[u];
  if (t.prev != kNone) blocks_[t.prev].next = m;
  t.prev = m;
  t.addr += bytes;
  t.size -= bytes;
  return m;
}

// Unmaps the whole pages inside a free block of an expandable segment.
void AllocatorModel::unmap_free(BlockId id) {
  const Block b = blocks_[id];
  const uint64_t pg = page(b.small);
  const uint64_t base = segments_[b.segment].addr;  // pages are counted from the range's start
  const uint64_t lo = base + round_up(b.addr - base, pg);
  const uint64_t hi = base + round_down(b.addr + b.size - base, pg);
  if (hi <= lo) return;
  erase_free(id);
  BlockId middle = id;
  if (lo > b.addr) {  // the head stays mapped and free
    Block head = b;
    head.size = lo - b.addr;
    const BlockId h = new_block(head);
    if (b.prev != kNone) blocks_[b.prev].next = h;
    blocks_[h].next = id;
    blocks_[id].prev = h;
    insert_free(h);
  }
  if (hi < b.addr + b.size) {  // so does the tail
    Block tail = blocks_[id];
    tail.addr = hi;
    tail.size = b.addr + b.size - hi;
    tail.prev = id;
    const BlockId t = new_block(tail);
    if (blocks_[id].next != kNone) blocks_[blocks_[id].next].prev = t;
    blocks_[id].next = t;
    if (segments_[b.segment].tail == id) segments_[b.segment].tail = t;
    insert_free(t);
  }
  Block& m = blocks_[middle];
  m.addr = lo;
  m.size = hi - lo;
  m.mapped = false;
  counters_.reserved -= hi - lo;
  ++counters_.segment_frees;
  // Unmapped neighbours become one range.
  auto unmapped = [&](BlockId x) {
    return x != kNone && !blocks_[x].mapped && !blocks_[x].allocated && !blocks_[x].pending;
  };
  if (unmapped(blocks_[middle].next)) unlink(middle, blocks_[middle].next);
  if (unmapped(blocks_[middle].prev)) unlink(blocks_[middle].prev, middle);
}

// --- reporting ----------------------------------------------------------------------------------

std::pair<uint64_t, uint64_t> AllocatorModel::free_space() const {
  uint64_t total = 0, largest = 0;
  for (const auto* set : {&small_free_, &large_free_}) {
    for (const FreeKey& k : *set) {
      const Block& b = blocks_[k.id];
      if (policy_.kind == AllocatorPolicy::Kind::kBestFit && b.next == kNone) continue;  // not reserved
      total += b.size;
      largest = std::max(largest, b.size);
    }
  }
  return {total, largest};
}

}  // namespace plumb::mem
