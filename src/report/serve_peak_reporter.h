// plumb serve peak's result for people and programs: every probe (its load, each bound's p99 and
// misses, pass or fail and why), the answer per card with the command that reproduces it, and
// the Pareto table of tokens/s per user against tokens/s per card (docs/serve.md).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <vector>

#include "serve/pareto.h"
#include "serve/result.h"

namespace plumb::report {

// `result.peak` must be set.
void print_peak_console(std::ostream& out, const serve::ServeResult& result);
// The frontier table alone (a sweep's, too); nothing when `points` is empty.
void print_pareto_table(std::ostream& out, const std::vector<serve::ParetoPoint>& points);

// The "peak" member of plumb.serve/1 and the "pareto" member.
nlohmann::json peak_json(const serve::PeakResult& peak);
nlohmann::json pareto_json(const std::vector<serve::ParetoPoint>& points);

}  // namespace plumb::report
