// plumb serve peak's result for people and programs: every probe (its load, each bound's p99 and
// misses, pass or fail and why), the answer per card with the command that reproduces it, and
// the Pareto table of tokens/s per user against tokens/s per card (docs/serve.md).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <vector>

#include "common/json.h"
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

// The "peak" member read back (a stored record, plumb export's JSON): every field as peak_json
// writes it; a probe's run_index must name one of the document's `runs` runs. Errors name the
// JSON path: "7: peak.probes[0].run_index: ...". The "pareto" member is not read: it is derived
// from the runs and the probes' verdicts (serve::pareto_points), so it is drawn again from them.
serve::PeakResult peak_from_json(const JsonFields& fields, const nlohmann::json& peak,
                                 const std::string& path, size_t runs);

}  // namespace plumb::report
