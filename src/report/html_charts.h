// The charts section of the HTML report: per (layer, collective) one <figure class="chart"
// data-layer=… data-collective=…> with two inline SVG panels, busbw and p99 latency against size,
// baseline A and B overlaid (one series per baseline and data type) and the diff's regressions
// ringed in red.
#pragma once

#include <fmt/format.h>

#include <vector>

#include "baseline/diff.h"
#include "report/chart_data.h"

namespace plumb::report {

// `diff` may be null (one baseline, or two without a verdict).
void append_charts(const std::vector<ChartData>& charts, const baseline::Diff* diff,
                   fmt::memory_buffer& out);

}  // namespace plumb::report
