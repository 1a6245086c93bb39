// The HTML report (`plumb report`, and the report `plumb baseline` writes): one self-contained
// file -- CSS inline, charts as inline SVG drawn here, no script, no font or image by URL -- that
// opens from disk with no network.
//
// Sections: the baselines and, with two, the verdict; average busbw ≥ 1 MiB per layer and
// collective; one figure per (layer, collective) with busbw and p99 latency against size (the
// slowest group per size, A and B overlaid, regressions ringed in red; hovering a point shows its
// values); the regressions and the diff's rows; the variables that differ; run, topology and
// environment tables. See docs/report.md.
#pragma once

#include <fmt/format.h>

#include <ostream>
#include <string_view>

#include "baseline/diff.h"
#include "baseline/store.h"

namespace plumb::report {

// `b` and `diff` are null for a report of one baseline; `diff` is `baseline::diff(a, *b)` when
// given. The whole page is built in memory and written with one call.
void write_html_report(const baseline::Record& a, const baseline::Record* b,
                       const baseline::Diff* diff, std::ostream& out);

// The same page into `out` (for callers that keep it in memory).
void render_html_report(const baseline::Record& a, const baseline::Record* b,
                        const baseline::Diff* diff, fmt::memory_buffer& out);

// The pieces the page of a baseline set (report/set_html.h) shares with this one: the page's
// CSS after kPageStyle; the comm sections (summary, charts, and with a diff its rows and the
// variables); the verdict paragraphs of a diff (regressions, too noisy, the attribution warning).
std::string_view report_style();
void append_comm_sections(const baseline::Record& a, const baseline::Record* b,
                          const baseline::Diff* diff, fmt::memory_buffer& out);
void append_diff_verdict(const baseline::Diff& diff, fmt::memory_buffer& out);

}  // namespace plumb::report
