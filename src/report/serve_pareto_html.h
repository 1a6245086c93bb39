// The Pareto chart of a serving result as a self-contained HTML page (plumb serve peak --html
// FILE): tokens/s per user across, output tokens/s per card up, one hoverable point per run, the
// frontier drawn through the runs no other beats on both; a peak search's probes coloured by
// whether they met the SLO. append_pareto_section is the same chart for a larger page (plumb
// report).
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "serve/pareto.h"

namespace plumb::report {

// <section id="pareto"> with the chart and its table; a note instead when `points` is empty.
void append_pareto_section(const std::vector<serve::ParetoPoint>& points, fmt::memory_buffer& out);

// The whole page; `title` names the run (escaped).
std::string pareto_html(const std::vector<serve::ParetoPoint>& points, const std::string& title);

}  // namespace plumb::report
