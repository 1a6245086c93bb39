// The memory baseline (mem/memory_baseline) on the console and as JSON: `plumb mem creep`, and the
// `memory` part of a baseline set (issue 29, item 4): ranks[] and worst, each with settled_bytes,
// creep_bytes_per_step, creep_ci95_bytes_per_step and verdict, and checkpoint with its three levels
// and its own verdict. Every figure that could not be taken is null, never 0 (docs/mem.md).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

#include "mem/memory_baseline.h"

namespace plumb::report {

inline constexpr const char* kMemCreepSchema = "plumb.mem-creep/1";

// The memory part: {source, warmup, lines, lines_without_memory, ranks[], worst, checkpoint}.
nlohmann::json memory_baseline_json(const mem::MemoryBaseline& b);

// A table, one row per rank, then the worst rank's creep and the checkpoint check.
void print_memory_baseline(const mem::MemoryBaseline& b, std::ostream& out);

}  // namespace plumb::report
