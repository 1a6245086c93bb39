// Periodic torch.cuda.memory_stats() dumps: JSON Lines, one dict per step, with the flattened keys
// memory_stats() returns ("allocated_bytes.all.current", ...; c10/cuda/CUDACachingAllocator.h,
// DeviceStats), plus an optional "step". What they say of a long run: the per-step timeline, the
// peaks, fragmentation, the baseline's creep, and the allocator's retries and OOMs (docs/mem.md,
// "memory_stats() dumps"). A dump holds counters, not events: no stacks, no blocks, no OOM cause.
//   {"step": 1, "allocated_bytes.all.current": 6443499520, "allocated_bytes.all.peak": ...,
//    "active_bytes.all.current": ..., "reserved_bytes.all.current": ..., "num_ooms": 0, ...}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mem/input.h"
#include "mem/steps.h"

namespace plumb::mem {

// One dump. Peaks are the high-water marks since the process began or since the last
// torch.cuda.reset_peak_memory_stats(); retries and OOMs count since then too.
struct StatsPoint {
  uint64_t step = 0;            // "step", else the dump's position (1, 2, ...)
  uint64_t allocated = 0;       // allocated_bytes.all.current: what the program holds
  uint64_t allocated_peak = 0;  // allocated_bytes.all.peak
  uint64_t active = 0;          // active_bytes.all.current: also blocks waiting for their streams
  uint64_t active_peak = 0;
  uint64_t reserved = 0;        // reserved_bytes.all.current: segments taken from the driver
  uint64_t reserved_peak = 0;
  uint64_t inactive_split = 0;  // inactive_split_bytes.all.current: free parts of split blocks
  uint64_t segments = 0;        // segment.all.current
  uint64_t alloc_retries = 0;   // num_alloc_retries: cudaMalloc retried after emptying the cache
  uint64_t ooms = 0;            // num_ooms
};

struct StatsSeries {
  std::string source;  // the file, for messages and the report
  std::vector<StatsPoint> points;  // in file order; steps strictly increase
};

// True when the first line that is not blank nor a '#' comment is a JSON object with a key ending
// in ".all.current" (memory_stats()'s flattened keys): checked before plumb.mem-events/1.
bool looks_like_memory_stats(std::string_view text);
// The same of bytes read once (mem/input.h; false for a pickle): what the CLI asks before
// read_trace or parse_memory_stats of the same bytes, so that a FIFO or a pipe is read once.
bool is_memory_stats(const InputBytes& input);
// The same on the first MiB of a regular file; false when it cannot be read, and for a FIFO, a
// pipe or a device without reading it (it could be read only once: use load_input).
bool is_memory_stats_file(const std::string& path);

// Every problem of the whole file, one line each ("stats.jsonl:3: missing
// 'reserved_bytes.all.current'"), in one plumb::Error. Keys not read here are ignored.
StatsSeries parse_memory_stats(std::string_view text, const std::string& name);
StatsSeries parse_memory_stats(const InputBytes& input);
StatsSeries read_memory_stats(const std::string& path);

// What a series says, as plain data for the reporters (report/mem_reporter).
struct StatsAnalysis {
  std::string source;
  std::vector<StatsPoint> timeline;  // one sample per dump
  StatsPoint peak;                   // maxima over the dumps of the peaks (and of the currents)
  uint64_t peak_allocated_step = 0;  // the first dump at which each peak is reached
  uint64_t peak_reserved_step = 0;
  double fragmentation = 0;          // 1 − peak active / peak reserved
  uint64_t end_free = 0;             // reserved − active at the last dump: cached, not in use
  Creep creep;                       // over allocated_bytes.all.current of every dump
  uint64_t alloc_retries = 0;        // rises of num_alloc_retries over the series (from 0)
  std::optional<uint64_t> first_retry_step;  // the step of the first dump where it rose
  uint64_t ooms = 0;                 // the same for num_ooms
  std::optional<uint64_t> first_oom_step;
};

// A series of one dump or more (an empty one is an Error).
StatsAnalysis analyze_stats(const StatsSeries& series);

}  // namespace plumb::mem
