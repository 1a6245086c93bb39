// `plumb mem analyze` output: the console summary and JSON (plumb.mem/1), for an allocator trace
// and for periodic memory_stats() dumps ("input": "trace" or "memory_stats").
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

#include "mem/analysis.h"
#include "mem/stats_reader.h"

namespace plumb::report {

void print_mem_analysis(const mem::Analysis& a, std::ostream& out);
nlohmann::json mem_analysis_json(const mem::Analysis& a);

// The timeline after every event as CSV: event,action,time_us,step,allocated,active,reserved
// (time_us empty when the trace has no times; step from 1, empty before the first step).
void write_mem_timeline_csv(const mem::Trace& t, const mem::Analysis& a, std::ostream& out);

void print_mem_stats(const mem::StatsAnalysis& a, std::ostream& out);
nlohmann::json mem_stats_json(const mem::StatsAnalysis& a);

}  // namespace plumb::report
