// `plumb mem replay` output: the side-by-side table of allocator policies on the console, and
// JSON (plumb.mem-replay/1).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "mem/replay.h"
#include "mem/trace.h"

namespace plumb::report {

struct ReplayReport {
  std::string source;
  size_t events = 0;
  uint64_t capacity = 0;         // 0: unlimited
  std::string capacity_from;     // "--capacity", "the trace's oom event", "none"
  mem::ReserveCheck check;       // the first policy (as recorded) against the trace
  std::vector<mem::ReplayResult> policies;  // the first is the recorded policy
  bool has_recorded_oom = false;
  uint64_t recorded_peak_reserved = 0;
};

void print_mem_replay(const ReplayReport& r, std::ostream& out);
nlohmann::json mem_replay_json(const ReplayReport& r);

}  // namespace plumb::report
