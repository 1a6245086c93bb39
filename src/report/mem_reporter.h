// `plumb mem analyze` output: the console summary and JSON (plumb.mem/1), for an allocator trace
// and for periodic memory_stats() dumps ("input": "trace" or "memory_stats").
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "mem/analysis.h"
#include "mem/stats_reader.h"

namespace plumb::report {

// "+3 MiB", "-512 KiB": a slope or change in bytes, rounded to whole bytes and written by
// format_bytes (common/units.h). The console and the HTML page (mem_html) both use it, so that a
// creep or a leaking stack's bytes per step reads the same on both.
std::string signed_bytes(double bytes);

void print_mem_analysis(const mem::Analysis& a, std::ostream& out);
nlohmann::json mem_analysis_json(const mem::Analysis& a);

// The timeline after every event as CSV: event,action,time_us,step,allocated,active,reserved
// (time_us empty when the trace has no times; step from 1, empty before the first step).
void write_mem_timeline_csv(const mem::Trace& t, const mem::Analysis& a, std::ostream& out);

void print_mem_stats(const mem::StatsAnalysis& a, std::ostream& out);
nlohmann::json mem_stats_json(const mem::StatsAnalysis& a);

}  // namespace plumb::report
