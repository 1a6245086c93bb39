// `plumb mem replay`: the allocation sequence of a trace replayed under an allocator model, to
// answer "what would another policy have done with this run?". The models follow PyTorch's
// CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp) and torch_npu's copy of it
// (NPUCachingAllocator.cpp); docs/mem.md, "Replay", gives every rule and what is simplified.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "mem/timeline.h"
#include "mem/trace.h"

namespace plumb::mem {

inline constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();

struct AllocatorPolicy {
  enum class Kind { kCaching, kBestFit };

  std::string name;
  std::string description;
  Kind kind = Kind::kCaching;
  uint64_t pad = 0;                          // torch_npu adds 32 bytes before rounding
  uint64_t min_block = 512;                  // kMinBlockSize: sizes round up to a multiple
  uint64_t small_size = 1 << 20;             // kSmallSize: requests up to 1 MiB: small pool
  uint64_t small_buffer = 2 << 20;           // kSmallBuffer: a small pool segment
  uint64_t large_buffer = 20 << 20;          // kLargeBuffer: a segment for requests < 10 MiB
  uint64_t min_large_alloc = 10 << 20;       // kMinLargeAlloc
  uint64_t round_large = 2 << 20;            // kRoundLarge: larger segments round up to this
  uint64_t max_split_size = kUnlimited;      // max_split_size_mb
  unsigned roundup_power2_divisions = 0;     // roundup_power2_divisions (0 and 1: off)
  double gc_threshold = 0;                   // garbage_collection_threshold (needs a capacity)
  bool expandable_segments = false;          // expandable_segments:True
  unsigned bucket_divisions = 0;             // the program's sizes bucketed (0: as recorded)

  // Every setting, without the name and description: two policies with equal settings allocate
  // alike (replay_all replays them once). A new setting must be added here.
  auto settings() const {
    return std::tie(kind, pad, min_block, small_size, small_buffer, large_buffer, min_large_alloc,
                    round_large, max_split_size, roundup_power2_divisions, gc_threshold,
                    expandable_segments, bucket_divisions);
  }
};

// The built-in policies, in the order the comparison table prints them.
const std::vector<AllocatorPolicy>& builtin_policies();

// A policy by name, optionally with PYTORCH_CUDA_ALLOC_CONF-style settings after a colon:
// "pytorch", "expandable", "pytorch:max_split_size_mb=128,roundup_power2_divisions=4".
// Errors name the setting and what was expected (did-you-mean for names).
AllocatorPolicy policy_from_spec(const std::string& spec);

// --policies: "all", or specs separated by commas, where an item with '=' and no ':' continues
// the spec before it ("pytorch:max_split_size_mb=256,roundup_power2_divisions=4,expandable" is two).
std::vector<AllocatorPolicy> policies_from_list(const std::string& list);

// The policy the trace was recorded under: PyTorch's (torch_npu's when the trace has workspace
// entries) with the trace's allocator_settings applied (max_split_size, expandable_segments,
// garbage_collection_threshold, and PYTORCH_CUDA_ALLOC_CONF's roundup_power2_divisions).
AllocatorPolicy recorded_policy(const Trace& trace);

struct ReplayOptions {
  uint64_t capacity = 0;  // bytes the allocator may reserve; 0: unlimited
  unsigned threads = 2;   // replay_all: policies replayed at once (1: one after another)
  // How many results, from the first, keep ReplayResult::reserved (8 bytes per event each; the
  // others leave it empty): `plumb mem replay` needs only the first, the recorded policy's, for
  // the check, and a page fault per 4 KiB written is dear (this project's VM: 40 ms a series on
  // 1.6 million events, as much as the replay itself).
  size_t series = std::numeric_limits<size_t>::max();
};

struct ReplayResult {
  std::string policy;
  std::string description;
  uint64_t capacity = 0;               // what the replay ran against (0: unlimited)
  size_t allocations = 0;              // allocations replayed
  uint64_t peak_allocated = 0;         // rounded block sizes the program held at once
  uint64_t peak_reserved = 0;
  uint64_t final_reserved = 0;
  double fragmentation = 0;            // 1 − peak active / peak reserved
  uint64_t free_at_peak = 0;           // reserved − live blocks at the reserved peak
  uint64_t largest_free_at_peak = 0;   // the largest free block then
  uint64_t segment_allocs = 0;         // cudaMalloc calls (expandable: page mappings)
  uint64_t segment_frees = 0;          // cudaFree calls (expandable: page unmappings)
  uint64_t cache_flushes = 0;          // times the cache was emptied to retry an allocation
  bool ran_out = false;                // an allocation failed at the capacity
  size_t first_failure_event = 0;      // the event index of the first failure
  uint64_t first_failure_bytes = 0;
  bool served_recorded_oom = false;    // the trace's own oom request was served by this policy
  std::vector<uint64_t> reserved;      // after each event (empty: not kept, ReplayOptions::series)
};

// The trace's allocations and frees (alloc, free_requested, free_completed, oom) under `policy`;
// the trace's own segment events are not used, except to borrow their addresses.
ReplayResult replay(const Trace& trace, const AllocatorPolicy& policy, const ReplayOptions& o);

// replay() of each policy, in the order given, on up to o.threads threads that share the trace
// and one scan of it: the results are those of replay() one after another, whatever the threads.
// A policy whose settings equal an earlier one's is not replayed again: its result is that one's,
// under its own name (the recorded policy is often PyTorch's defaults).
std::vector<ReplayResult> replay_all(const Trace& trace, const std::vector<AllocatorPolicy>& policies,
                                     const ReplayOptions& o);

// How the default policy's replay compares with the reserved bytes the trace recorded.
struct ReserveCheck {
  bool comparable = false;   // the trace is complete (nothing dropped) and has segment events
  std::string why_not;       // when not comparable
  size_t events_compared = 0;
  size_t mismatches = 0;
  size_t first_mismatch = 0;                // event index
  uint64_t recorded_at_mismatch = 0, replayed_at_mismatch = 0;
};

// `start` is trace_start(trace) (timeline.h); the recorded reserved bytes are counted from it as
// the timeline counts them.
ReserveCheck check_against_recorded(const Trace& trace, const TraceStart& start, const ReplayResult& r);
// With the timeline an analysis has made already.
inline ReserveCheck check_against_recorded(const Trace& trace, const Timeline& tl, const ReplayResult& r) {
  return check_against_recorded(trace, TraceStart{tl.initial, tl.dropped_frees}, r);
}

// Bytes the allocator may reserve as the trace itself tells: reserved + device_free at its first
// oom event; 0 when it has none.
uint64_t capacity_from_trace(const Trace& trace, const TraceStart& start);
inline uint64_t capacity_from_trace(const Trace& trace, const Timeline& tl) {
  return capacity_from_trace(trace, TraceStart{tl.initial, tl.dropped_frees});
}

}  // namespace plumb::mem
