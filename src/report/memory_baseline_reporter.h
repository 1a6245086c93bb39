// The memory baseline (mem/memory_baseline) on the console and as JSON: `plumb mem creep`, and the
// `memory` part of a baseline set (issue 29, item 4): ranks[] and worst, each with settled_bytes,
// creep_bytes_per_step, creep_ci95_bytes_per_step and verdict, and checkpoint with its three levels
// and its own verdict. Every figure that could not be taken is null, never 0 (docs/mem.md).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "mem/memory_baseline.h"

namespace plumb::report {

inline constexpr const char* kMemCreepSchema = "plumb.mem-creep/1";

// The memory part: {source, warmup, lines, lines_without_memory, ranks[], worst, checkpoint}.
nlohmann::json memory_baseline_json(const mem::MemoryBaseline& b);

// The memory part read back (a stored set, an exported one): every field type- and range-checked,
// errors naming `origin` and the JSON path ("baseline 4: memory.ranks[1].settled_bytes: expected
// a number, got \"x\""); `path` is where the part sits ("memory"). The per-step minima of the fit
// are not kept in the part: Creep::step_min and step_peak come back empty.
mem::MemoryBaseline memory_baseline_from_json(const nlohmann::json& part, const std::string& origin,
                                              const std::string& path = "memory");

// A table, one row per rank, then the worst rank's creep and the checkpoint check.
void print_memory_baseline(const mem::MemoryBaseline& b, std::ostream& out);

}  // namespace plumb::report
