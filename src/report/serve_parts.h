// The optional parts of a serving run — the server's /metrics series, energy and cost — read back
// from plumb.serve/1 and said in one line each on the console (docs/serve.md, "Server side",
// "Cost and energy"). Their JSON writers are their owners' (serve/server_metrics.h, energy.h,
// cost.h).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common/json.h"
#include "serve/result.h"

namespace plumb::report {

// Reads "server", "energy" and "cost" of the run at `path` when present (null or absent: none).
// Errors name the JSON path, as the rest of serve_from_json.
void serve_parts_from(const JsonFields& fields, const nlohmann::json& run, const std::string& path,
                      serve::ServeRun& out);

// The parts as JSON members of the run: {"server": ..., "energy": ..., "cost": ...}, each only
// when taken.
void serve_parts_json(const serve::ServeRun& run, nlohmann::json& out);

// "Energy: 1520.4 J over 12.3 s, mean 123.6 W (nvidia-smi, 8 cards): 2.14 output tokens/J",
// "Cost: 0.451 per million output tokens (--price 2.5 per card-hour, 8 cards)",
// "Server /metrics: 14 series from http://h:8000/metrics" (or its problem).
std::vector<std::string> serve_part_lines(const serve::ServeRun& run);

}  // namespace plumb::report
