// An allocator model that `plumb mem replay` drives: PyTorch's caching allocator with its
// settings (c10/cuda/CUDACachingAllocator.cpp), torch_npu's variant, and a plain best-fit arena.
// Blocks live in segments; a segment is one cudaMalloc (or, with expandable segments, one range of
// virtual addresses whose pages are mapped on demand). docs/mem.md, "Replay", lists the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mem/free_pool.h"
#include "mem/replay.h"

namespace plumb::mem {

// Sizes the program asks for, as the policy rounds them (round_size, with torch_npu's pad and
// roundup_power2_divisions), and the segment a new block of that size gets (get_allocation_size).
uint64_t policy_round_size(const AllocatorPolicy& p, uint64_t size);
uint64_t policy_allocation_size(const AllocatorPolicy& p, uint64_t rounded);
// roundup_power2_next_division: the next of `divisions` equal steps between powers of two.
uint64_t round_to_power2_division(uint64_t size, unsigned divisions);

struct ModelCounters {
  uint64_t allocated = 0;  // blocks the program holds
  uint64_t active = 0;     // and blocks freed but waiting for their streams
  uint64_t reserved = 0;   // segments (expandable: mapped pages)
  uint64_t segment_allocs = 0;
  uint64_t segment_frees = 0;
  uint64_t cache_flushes = 0;
};

class AllocatorModel {
 public:
  using BlockId = uint32_t;

  // `capacity`: bytes the model may reserve (kUnlimited: no limit). `segment_addresses`: addresses
  // to give new segments of matching size, in order (the trace's own, so ties break as they did).
  AllocatorModel(AllocatorPolicy policy, uint64_t capacity,
                 std::vector<std::pair<uint64_t, uint64_t>> segment_addresses = {});

  static constexpr BlockId kNoBlock = 0xffffffffu;

  // A block for `size` bytes (as the program asked) on `stream`, or kNoBlock when out of memory.
  // (Ids, not std::optional, inside the model and in the replay's loop: GCC returns a small
  // optional through stores and a wider load, a store-forwarding stall per call that was half of
  // malloc's time.)
  BlockId allocate(uint64_t size, int64_t stream);
  // allocate() as an optional, for callers off the hot path.
  std::optional<BlockId> malloc(uint64_t size, int64_t stream) {
    const BlockId b = allocate(size, stream);
    return b == kNoBlock ? std::nullopt : std::optional<BlockId>(b);
  }
  // The program frees the block; it returns to the pool at once, or at complete() when `deferred`.
  void free(BlockId b, bool deferred);
  void complete(BlockId b);
  bool pending(BlockId b) const;
  // Block ids are reused once their block is merged away: a holder compares the generation it
  // saw with the current one before acting on an id.
  uint32_t generation(BlockId b) const { return generations_[b]; }

  const ModelCounters& counters() const { return counters_; }
  // Free bytes inside reserved memory and the largest free block (mapped, for expandable).
  std::pair<uint64_t, uint64_t> free_space() const;

 private:
  struct Block {
    uint64_t addr = 0, size = 0;
    int64_t stream = 0;
    uint32_t segment = 0;
    bool small = false, allocated = false, pending = false, mapped = true;
    uint64_t freed_at = 0;  // large_lookups_ when it last became free (garbage collection age)
    BlockId prev = kNone, next = kNone;
  };
  struct Segment {
    uint64_t addr = 0, size = 0;
    bool small = false, expandable = false;
    int64_t stream = 0;
    uint32_t tail = 0xffffffffu;  // the block at its end
  };
  static constexpr BlockId kNone = kNoBlock;

  BlockId malloc_rounded(uint64_t size, int64_t stream);
  BlockId find_free(bool small, int64_t stream, uint64_t size);
  BlockId new_segment(bool small, int64_t stream, uint64_t size);
  BlockId grow_expandable(bool small, int64_t stream, uint64_t size);
  uint32_t expandable_segment(bool small, int64_t stream);
  BlockId map_range(BlockId start, uint64_t size, bool small);
  BlockId map_front(BlockId unmapped, uint64_t bytes);
  BlockId take(BlockId b, uint64_t size);
  bool should_split(const Block& b, uint64_t size) const;
  void return_block(BlockId b);
  BlockId merge(BlockId into, BlockId from);
  bool free_and_mapped(BlockId b) const;
  void release_cached();
  bool release_oversize(bool small, int64_t stream, uint64_t size);
  void collect_garbage();
  void release_whole(BlockId b);
  void unmap_free(BlockId b);
  BlockId new_block(const Block& b);
  void insert_free(BlockId b);
  void erase_free(BlockId b);
  FreePool& pool(bool small) { return small ? small_free_ : large_free_; }
  uint64_t next_segment_address(uint64_t size);
  uint64_t page(bool small) const { return small ? policy_.small_buffer : policy_.large_buffer; }
  void refresh_arena_reserved();
  void unlink(BlockId lo, BlockId hi);

  AllocatorPolicy policy_;
  uint64_t capacity_;
  std::vector<std::pair<uint64_t, uint64_t>> borrowed_;  // (size, address) of the trace's segments
  size_t borrowed_next_ = 0;
  uint64_t synthetic_next_ = 0;
  std::vector<Block> blocks_;
  std::vector<BlockId> spare_;
  std::vector<Segment> segments_;
  FreePool small_free_, large_free_;
  std::vector<BlockId> pending_;
  ModelCounters counters_;
  uint64_t large_lookups_ = 0;  // free-block searches of the large pool: garbage collection's clock
  std::vector<uint32_t> generations_;
};

}  // namespace plumb::mem
