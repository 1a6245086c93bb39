// plumb serve's results for people and for programs (docs/serve.md, "Output"):
//  * the console: one run as vLLM bench serve's summary block; a sweep as a table, one line per
//    run (its concurrency or rate, req/s, output tok/s, TTFT p50/p99, TPOT p50/p99, ITL p99,
//    E2E p99, goodput, errors, a keep-up note);
//  * JSON plumb.serve/1, read back by serve_from_json (the store, plumb diff).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "serve/result.h"

namespace plumb::report {

inline constexpr const char* kServeSchema = "plumb.serve/1";

// "c=4", "r=10/s", "r=10/s c=4", "r=inf": a run's load point.
std::string serve_run_label(const serve::ServeRun& run);

// With a peak search (result.peak), its probes, answer and Pareto table follow the runs.
void print_serve_console(std::ostream& out, const serve::ServeResult& result);

// With a peak search, "peak" and "pareto" too (report/serve_peak_reporter).
nlohmann::json serve_json(const serve::ServeResult& result);
// Throws plumb::Error (exit 2) naming `where` and the JSON path of a missing or wrong field:
// "run.json: runs[0].ttft_ms.p99: expected a number, got \"x\"". Each run's server, energy and
// cost parts are read by report/serve_parts; plumb serve peak's "peak" by
// report/serve_peak_reporter (its "pareto" is drawn again from the runs and the probes).
serve::ServeResult serve_from_json(const nlohmann::json& doc, const std::string& where);

}  // namespace plumb::report
