// `plumb mem report`: the HTML page of one allocator trace -- one self-contained file like the
// baseline report (CSS inline, charts as inline SVG drawn here, no script, nothing by URL).
//
// Sections: the header (source, events, steps and how they were found, peaks, the creep verdict,
// each OOM's cause); the memory timeline (live bytes stacked by category, reserved on top, step
// starts, the peaks and OOMs marked); the fragmentation curve (reserved − allocated); the
// per-step minimum of allocated bytes with the fitted creep line; the allocator policies compared
// (a table, and reserved bytes over the events per policy). Series over the events are drawn with
// at most MemHtmlOptions::max_points points each, keeping each column's maximum. See
// docs/mem-report.md.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "mem/analysis.h"
#include "mem/categories.h"
#include "mem/replay.h"
#include "mem/trace.h"

namespace plumb::report {

// The most points one series over the events is drawn with: about one per horizontal pixel of a
// wide screen; more cannot be seen, and every point costs the page bytes.
inline constexpr size_t kMaxChartPoints = 2000;
// A downsampled series is a step line, four points per column (docs/mem-report.md).
inline constexpr size_t kPointsPerColumn = 4;

struct MemHtmlOptions {
  // The category rules the analysis used (--category-rules).
  std::vector<mem::CategoryRule> rules = mem::default_category_rules();
  size_t max_points = kMaxChartPoints;  // per series over the events
  bool by_event_index = false;          // x = event index even when the trace has times
};

// `a` is mem::analyze(t, ...); `policies` the replays to compare (empty: the section says how to
// get them). The whole page is built in memory.
void render_mem_html(const mem::Trace& t, const mem::Analysis& a,
                     const std::vector<mem::ReplayResult>& policies, const MemHtmlOptions& o,
                     fmt::memory_buffer& out);

// The same page written to `out` with one call.
void write_mem_html(const mem::Trace& t, const mem::Analysis& a,
                    const std::vector<mem::ReplayResult>& policies, const MemHtmlOptions& o,
                    std::ostream& out);

// Downsampling. The x range [x.front(), x.back()] is cut into `columns` columns of equal width;
// the events whose x falls in one column (x ascending: a run of consecutive events) make one
// bucket, drawn at the column's full width at the bucket's maximum, so that no peak is lost and
// a peak shorter than a column still shows. Empty columns make no bucket (nothing happened there:
// the value holds). With fewer events than columns on the event-index axis, every event is a
// bucket of its own.
struct Bucket {
  size_t begin = 0;  // the first event
  size_t end = 0;    // one past the last event
  size_t peak = 0;   // the event with the maximum (the first on ties)
  double left = 0;   // the column's edges in x
  double right = 0;
};
std::vector<Bucket> bucket_maxima(const std::vector<double>& x, const std::vector<uint64_t>& values,
                                  size_t columns);

// The step line through the buckets of one series (memory does not change between events): per
// bucket (left, the value before it), (left, its peak), (right, its peak), (right, the value
// after its last event); the first bucket without the first point. Each point names the event
// whose value it shows, so that stacked series take all their values from the same events.
struct StepLine {
  std::vector<double> x;
  std::vector<size_t> event;
};
StepLine step_line(const std::vector<Bucket>& buckets);

}  // namespace plumb::report
