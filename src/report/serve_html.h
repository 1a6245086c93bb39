// `plumb report` of a serving record (plumb serve bench|peak --store, docs/serve.md): one
// self-contained page like the comm report (CSS inline, charts as inline SVG, no script, nothing
// by URL). The setup; a table of the runs with the console's and plumb.serve/1's figures (TTFT,
// TPOT, ITL, E2E at p50 and p99, req/s, output tok/s, goodput, errors, dispatch delay p99, the
// keep-up verdict); the latencies, the output tokens/s and the req/s and goodput against the load (concurrency, or rate for
// an open loop); the Pareto chart (serve_pareto_html.h). With a second record B, each chart
// overlays B (dashed lines are p99, solid p50) and the setup and run tables stand side by side.
// Every string from a record is escaped.
#pragma once

#include <fmt/format.h>

#include <ostream>
#include <string>

#include "serve/result.h"

namespace plumb::report {

struct NamedServe {
  std::string name;  // "baseline 7", shown in the legend and the tables' headings
  const serve::ServeResult* result = nullptr;
};

// The whole page; `b.result` null for a page of one record.
void render_serve_html(const NamedServe& a, const NamedServe& b, fmt::memory_buffer& out);
void write_serve_html(const NamedServe& a, const NamedServe& b, std::ostream& out);

// One record's setup and runs tables (the baseline set page's serving block).
void append_serve_tables(const serve::ServeResult& result, fmt::memory_buffer& out);

// The latency and throughput charts of A (colour 0) and B (colour 1, when given) against the
// load: <figure class="chart" data-chart="ttft"> ... "tpot", "itl", "e2e", "throughput" (output
// tokens/s), "requests" (req/s and goodput req/s).
void append_serve_charts(const NamedServe& a, const NamedServe& b, fmt::memory_buffer& out);

// The style rules the blocks need after kPageStyle.
const char* serve_html_style();

}  // namespace plumb::report
