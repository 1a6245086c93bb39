#include "report/mem_html.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include "common/units.h"
#include "mem/category_timeline.h"
#include "report/html_out.h"
#include "report/html_style.h"
#include "report/mem_reporter.h"
#include "report/svg_chart.h"

namespace plumb::report {
namespace {

// After kPageStyle (html_style.h), as the baseline report. k0..k10 are
// the series colours (svg_chart.h); red is kept for OOMs and the creep fit.
constexpr std::string_view kMemoryStyle = R"(
ul.facts{margin:4px 0 8px;padding-left:20px}
td.best{background:#e3f4e1;font-weight:600}
code{background:#f3f3f3;padding:0 3px}
svg.lchart{width:100%;max-width:1300px;height:auto;display:block}
.k0{stroke:#1f6fb4;fill:#1f6fb4}.k1{stroke:#e8710a;fill:#e8710a}.k2{stroke:#2ca02c;fill:#2ca02c}
.k3{stroke:#9467bd;fill:#9467bd}.k4{stroke:#d62728;fill:#d62728}.k5{stroke:#8c8c8c;fill:#8c8c8c}
.k6{stroke:#bcbd22;fill:#bcbd22}.k7{stroke:#17becf;fill:#17becf}.k8{stroke:#8c564b;fill:#8c564b}
.k9{stroke:#e377c2;fill:#e377c2}.k10{stroke:#222;fill:#222}
.area{stroke:none;fill-opacity:.78}.line{fill:none;stroke-width:1.6}
.rule{stroke:#c8c8c8;stroke-width:.6}.rule.alert{stroke:#d62728;stroke-width:1.4}
.hover rect{fill:transparent}.hover rect:hover{fill:rgba(0,0,0,.08)}
.mark circle{fill:none;stroke:#222;stroke-width:2}.mark.alert circle{stroke:#d62728}
.mark text{font-size:12px;font-weight:600;fill:#222;paint-order:stroke;stroke:#fff;stroke-width:5px}
.mark.alert text{fill:#a40000}
.leak{border:2px solid #d62728;background:#fff5f5;padding:6px 12px;margin:8px 0 12px}
.leak h2{margin:4px 0 6px;border:none;color:#a40000}
.leak td.stack code{white-space:pre-wrap;background:none}.leak td.num{white-space:nowrap}
.leak details{margin-top:2px}.leak summary{cursor:pointer;color:#555}
)";

// Colours (CSS classes k<n>) of the categories in kCategories order, then of what is left.
constexpr int kCategoryColour[] = {0, 1, 2, 3, 7, 5};
constexpr int kBeforeColour = 8;
constexpr int kExtraColours[] = {6, 9};
constexpr int kPolicyColours[] = {0, 1, 2, 3, 7, 8, 9, 6};
constexpr int kReservedColour = 10;
constexpr int kRecordedColour = 5;
constexpr int kFitColour = 4;
constexpr int kLargestColour = 0;
constexpr size_t kMaxStepRules = 400;  // beyond this, every k-th step start: lines, not a grey wall
constexpr double kTimelineHeight = 340;
constexpr double kSmallChartHeight = 240;
constexpr double kMicrosPerSecond = 1e6;

std::string human(uint64_t bytes) { return format_bytes(bytes); }
// "702 MiB (736100352 B)": the exact figure goes where there is room for it (tooltips).
std::string exact(uint64_t bytes) { return fmt::format("{} ({} B)", format_bytes(bytes), bytes); }
uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

int64_t step_of(const mem::Steps& s, size_t event) {
  const auto it = std::upper_bound(s.starts.begin(), s.starts.end(), event);
  return it == s.starts.begin() ? -1 : static_cast<int64_t>(it - s.starts.begin()) - 1;
}

// Across every chart of the events: seconds since the first event when the trace has times (an
// event without one takes its predecessor's), the event index otherwise.
struct EventAxis {
  std::vector<double> x;
  bool time = false;
  std::string title;
  double at(size_t event) const { return event < x.size() ? x[event] : std::nan(""); }
};

EventAxis event_axis(const mem::Trace& t, bool by_event_index) {
  EventAxis axis;
  axis.time = t.has_time && !by_event_index;
  axis.title = axis.time    ? "time since the first event (s)"
               : t.has_time ? "event index"
                            : "event index (the trace has no times)";
  axis.x.reserve(t.events.size());
  double t0 = std::nan("");
  double last = 0;
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (!axis.time) {
      axis.x.push_back(static_cast<double>(i));
      continue;
    }
    const double us = t.events[i].time_us;
    if (std::isfinite(us) && std::isnan(t0)) t0 = us;
    if (std::isfinite(us)) last = (us - t0) / kMicrosPerSecond;
    axis.x.push_back(last);
  }
  return axis;
}

size_t columns_of(const MemHtmlOptions& o) {
  return std::max<size_t>(1, o.max_points / kPointsPerColumn);
}

// One series over the events as a step line through its buckets' maxima.
LinearSeries step_series(std::string name, int colour, SeriesStyle style,
                         const std::vector<double>& x, const std::vector<uint64_t>& values,
                         size_t columns) {
  LinearSeries s{std::move(name), colour, style, {}, {}, {}};
  const StepLine line = step_line(bucket_maxima(x, values, columns));
  s.x = line.x;
  for (size_t e : line.event) s.y.push_back(static_cast<double>(values[e]));
  return s;
}

// "event 835 (step 37, 6.524 s)".
std::string where(const mem::Analysis& a, const EventAxis& axis, size_t event) {
  const int64_t step = step_of(a.steps, event);
  std::string text = fmt::format("event {}", event);
  if (step >= 0 && axis.time) {
    return text + fmt::format(" (step {}, {:.3f} s)", step + 1, axis.at(event));
  }
  if (step >= 0) return text + fmt::format(" (step {})", step + 1);
  if (axis.time) return text + fmt::format(" ({:.3f} s)", axis.at(event));
  return text;
}

// The events a bucket covers, for a tooltip: "events 830–839, the highest at event 835".
std::string bucket_text(const mem::Analysis& a, const EventAxis& axis, const Bucket& b,
                        std::string_view what) {
  if (b.end - b.begin <= 1) return where(a, axis, b.peak);
  return fmt::format("events {}–{}, the highest {} at {}", b.begin, b.end - 1, what,
                     where(a, axis, b.peak));
}

void append_head(const mem::Analysis& a, fmt::memory_buffer& out) {
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>plumb mem report · ");
  put_escaped(out, a.source);
  put(out, "</title><style>");
  put(out, kPageStyle);
  put(out, kMemoryStyle);
  put(out, "</style></head><body>\n");
}

void append_creep_line(const mem::Creep& c, fmt::memory_buffer& out) {
  if (c.verdict == "too few steps") {
    putf(out, "<li>Creep: too few complete steps to judge ({} fitted, {} needed).</li>", c.steps,
         mem::kMinCreepSteps);
    return;
  }
  const bool leak = c.verdict == "leak";
  putf(out,
       "<li class=\"{}\">Creep: <b>{}</b> — the per-step minimum of allocated bytes rises "
       "<b>{}/step</b> (95% CI {} to {}; {:.0f} B/step) over {} complete steps.</li>",
       leak ? "warning" : "ok", leak ? "LEAK" : "stable", signed_bytes(c.slope_bytes_per_step),
       signed_bytes(c.ci95_low), signed_bytes(c.ci95_high), c.slope_bytes_per_step, c.steps);
}

// The full call stack of a site, innermost first, one frame a line.
void append_full_stack(const mem::Trace& t, const mem::LeakSite& g, fmt::memory_buffer& out) {
  if (g.stack == mem::kNoStack || g.stack >= t.stacks.size()) return;
  const std::vector<uint32_t>& frames = t.stacks[g.stack];
  putf(out, "<details><summary>the whole stack ({} frames)</summary><code>", frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i] >= t.frames.size()) continue;
    const mem::Frame& f = t.frames[frames[i]];
    if (i > 0) put(out, "\n");
    put_escaped(out, fmt::format("{} ({}:{})", f.name, f.filename, f.line));
  }
  put(out, "</code></details>");
}

// With a leak verdict, the sites that grew, as `plumb mem analyze` prints them ("grew" lines,
// and creep_sites in its JSON): what to fix, near the top of the page.
void append_leaking_stacks(const mem::Trace& t, const mem::Analysis& a, fmt::memory_buffer& out) {
  if (a.grew.empty()) return;
  put(out,
      "<div class=\"leak\" id=\"leak\"><h2>Leaking stacks</h2><p>The call stacks whose live "
      "bytes rose step after step (the least-squares slope of their live bytes at each step's "
      "start, steepest first); their slopes add up to roughly the creep.</p><table class=\"rows "
      "sites\"><tr><th>grew per step</th><th>live allocations at the last step</th><th>live at "
      "the first → last step start</th><th>allocation site (innermost frames first)</th></tr>");
  for (const mem::LeakSite& g : a.grew) {
    putf(out,
         "<tr><td class=\"num\" title=\"{:.0f} B per step\"><b>{} per step</b></td><td "
         "class=\"num\">{}</td><td class=\"num\">{} → {}</td><td class=\"stack\"><code>",
         g.bytes_per_step, signed_bytes(g.bytes_per_step), g.allocations_live,
         human(g.live_first), human(g.live_last));
    put_escaped(out, g.where);
    put(out, "</code>");
    append_full_stack(t, g, out);
    put(out, "</td></tr>");
  }
  put(out, "</table></div>");
}

void append_live_at_peak(const mem::Analysis& a, fmt::memory_buffer& out) {
  put(out, "<table class=\"kv\"><tr><th>live at the allocated peak</th><th>bytes</th></tr>");
  for (const auto& [category, bytes] : a.live_at_peak) {
    if (bytes == 0) continue;
    put(out, "<tr><td>");
    put_escaped(out, category);
    putf(out, "</td><td class=\"num\" title=\"{} B\">{}</td></tr>", bytes, human(bytes));
  }
  put(out, "</table>");
}

void append_header(const mem::Trace& t, const mem::Analysis& a, const EventAxis& axis,
                   fmt::memory_buffer& out) {
  const mem::Timeline& tl = a.timeline;
  put(out, "<header><h1>plumb mem report</h1><ul class=\"facts\"><li>Trace: <b>");
  put_escaped(out, a.source);
  putf(out, "</b> · {} events", a.events);
  if (axis.time && !axis.x.empty()) putf(out, " over {:.3f} s", axis.x.back());
  if (!a.has_time) put(out, " (no times: ordered by event index)");
  put(out, "</li><li>Steps: ");
  put_escaped(out, a.steps.how);
  put(out, "</li>");
  if (tl.dropped_frees > 0 || tl.initial.allocated > 0) {
    putf(out,
         "<li>The trace starts with {} allocated ({} free(s) of blocks allocated before it: the "
         "ring buffer dropped early events).</li>",
         human(tl.initial.allocated), tl.dropped_frees);
  }
  if (a.events > 0) {
    putf(out,
         "<li>Peak allocated <b>{}</b> at {} · peak reserved <b>{}</b> at {} · peak active {}</li>",
         human(tl.peak.allocated), where(a, axis, tl.peak_allocated_index), human(tl.peak.reserved),
         where(a, axis, tl.peak_reserved_index), human(tl.peak.active));
  }
  putf(out,
       "<li>Fragmentation: 1 − peak active / peak reserved = <b>{:.1f}%</b> · at the reserved "
       "peak {} free in segments, largest block {} ({:.0f}% scattered) · at the end {} free, "
       "largest {}</li>",
       100 * a.fragmentation, human(a.at_peak.free), human(a.at_peak.largest_free_block),
       100 * a.at_peak.scattered, human(a.at_end.free), human(a.at_end.largest_free_block));
  append_creep_line(a.creep, out);
  for (const mem::Oom& o : a.ooms) {
    putf(out, "<li class=\"warning\"><b>OOM</b> at {}: <b>", where(a, axis, o.event));
    put_escaped(out, o.cause);
    put(out, "</b> — ");
    put_escaped(out, o.explanation);
    put(out, "</li>");
  }
  if (a.ooms.empty()) put(out, "<li>No OOM in the trace.</li>");
  put(out, "</ul>");
  append_leaking_stacks(t, a, out);
  append_live_at_peak(a, out);
  put(out,
      "<nav><a href=\"#timeline\">Timeline</a><a href=\"#fragmentation\">Fragmentation</a>"
      "<a href=\"#steps\">Steps</a><a href=\"#policies\">Policies</a></nav></header>\n");
}

// Step starts (every k-th beyond kMaxStepRules) and OOMs as vertical lines.
void add_rules(const mem::Analysis& a, const EventAxis& axis, LinearChart& c) {
  const size_t n = a.steps.starts.size();
  const size_t stride = n > kMaxStepRules ? (n + kMaxStepRules - 1) / kMaxStepRules : 1;
  for (size_t i = 0; i < n; i += stride) c.rules.push_back({axis.at(a.steps.starts[i]), false});
  for (const mem::Oom& o : a.ooms) c.rules.push_back({axis.at(o.event), true});
}

void add_oom_marks(const mem::Analysis& a, const EventAxis& axis, LinearChart& c) {
  for (const mem::Oom& o : a.ooms) {
    c.marks.push_back({axis.at(o.event), static_cast<double>(o.allocated_bytes), "OOM: " + o.cause,
                       fmt::format("OOM at {}: {} asked · {}\n{}", where(a, axis, o.event),
                                   exact(o.requested_bytes), o.cause, o.explanation),
                       true, false});
  }
}

int category_colour(const std::string& name, size_t& extra) {
  if (name == mem::kBeforeTheTrace) return kBeforeColour;
  for (size_t i = 0; i < std::size(mem::kCategories); ++i) {
    if (name == mem::kCategories[i]) return kCategoryColour[i];
  }
  return kExtraColours[extra++ % std::size(kExtraColours)];
}

std::string timeline_tip(const mem::Analysis& a, const EventAxis& axis,
                         const mem::CategoryTimeline& ct, const Bucket& b, uint64_t reserved_max) {
  const mem::Sample s = a.timeline.samples[b.peak];
  std::string tip = bucket_text(a, axis, b, "allocated");
  tip += fmt::format("\nallocated {}\nreserved {}", exact(s.allocated), exact(s.reserved));
  if (reserved_max > s.reserved) {
    tip += fmt::format(" (up to {} in these events)", exact(reserved_max));
  }
  tip += fmt::format("\nactive {}", exact(s.active));
  for (size_t c = 0; c < ct.categories.size(); ++c) {
    const uint64_t v = ct.bytes[c][b.peak];
    if (v > 0) tip += fmt::format("\n  {} {}", ct.categories[c], exact(v));
  }
  return tip;
}

std::vector<uint64_t> column(const mem::Samples& samples,
                             uint64_t mem::Sample::*field) {
  std::vector<uint64_t> v;
  v.reserve(samples.size());
  for (const mem::Sample s : samples) v.push_back(s.*field);
  return v;
}

uint64_t max_in(const std::vector<uint64_t>& v, size_t begin, size_t end) {
  uint64_t m = 0;
  for (size_t i = begin; i < end && i < v.size(); ++i) m = std::max(m, v[i]);
  return m;
}

void add_peak_marks(const mem::Analysis& a, const EventAxis& axis, LinearChart& c) {
  const mem::Timeline& tl = a.timeline;
  const uint64_t allocated = tl.samples[tl.peak_allocated_index].allocated;
  const uint64_t reserved = tl.samples[tl.peak_reserved_index].reserved;
  c.marks.push_back({axis.at(tl.peak_reserved_index), static_cast<double>(reserved),
                     "peak reserved " + human(reserved),
                     fmt::format("peak reserved {} at {}", exact(reserved),
                                 where(a, axis, tl.peak_reserved_index)),
                     false, false});
  c.marks.push_back({axis.at(tl.peak_allocated_index), static_cast<double>(allocated),
                     "peak allocated " + human(allocated),
                     fmt::format("peak allocated {} at {}", exact(allocated),
                                 where(a, axis, tl.peak_allocated_index)),
                     false, true});
}

void append_timeline(const mem::Trace& t, const mem::Analysis& a, const EventAxis& axis,
                     const MemHtmlOptions& o, fmt::memory_buffer& out) {
  put(out,
      "<section id=\"timeline\"><h2>Memory timeline</h2><p class=\"note\">Live (allocated) "
      "bytes after each event, stacked by what the allocation's call stack says it is for; the "
      "reserved bytes (segments taken from the driver) on top. Light vertical lines: step "
      "starts; red: OOMs. Hover anywhere for the values there.</p>");
  LinearChart c;
  c.title = "live bytes by category, and reserved";
  c.x_title = axis.title;
  c.empty_note = "the trace has no events";
  c.height = kTimelineHeight;
  c.y_unit_names = true;
  if (!t.events.empty()) {
    const mem::CategoryTimeline ct =
        mem::category_timeline(t, a.timeline, mem::Categorizer(t, o.rules));
    const std::vector<uint64_t> allocated = column(a.timeline.samples, &mem::Sample::allocated);
    const std::vector<uint64_t> reserved = column(a.timeline.samples, &mem::Sample::reserved);
    const std::vector<Bucket> buckets = bucket_maxima(axis.x, allocated, columns_of(o));
    const StepLine line = step_line(buckets);
    size_t extra = 0;
    for (size_t k = 0; k < ct.categories.size(); ++k) {
      const int colour = category_colour(ct.categories[k], extra);
      if (*std::max_element(ct.bytes[k].begin(), ct.bytes[k].end()) == 0) continue;
      LinearSeries s{ct.categories[k], colour, SeriesStyle::kArea, line.x, {}, {}};
      for (size_t e : line.event) s.y.push_back(static_cast<double>(ct.bytes[k][e]));
      c.series.push_back(std::move(s));
    }
    c.series.push_back(step_series("reserved", kReservedColour, SeriesStyle::kLine, axis.x,
                                   reserved, columns_of(o)));
    for (const Bucket& b : buckets) {
      c.hover_x.push_back((b.left + b.right) / 2);
      c.hover_tips.push_back(timeline_tip(a, axis, ct, b, max_in(reserved, b.begin, b.end)));
    }
    add_rules(a, axis, c);
    add_peak_marks(a, axis, c);
    add_oom_marks(a, axis, c);
    if (buckets.size() < t.events.size()) {
      putf(out,
           "<p class=\"note\">{} events drawn in {} columns: each column shows the most bytes "
           "allocated by any of its events (the reserved line, the most reserved), so no peak is "
           "lost.</p>",
           t.events.size(), buckets.size());
    }
  }
  append_linear_figure(c, "Memory timeline", out);
  put(out, "</section>\n");
}

// Per OOM: the request as a dashed line across the chart, and rings at the OOM on the largest
// free block and on the free bytes in all (cached in segments + the driver's remainder), so
// that a fragmentation OOM reads as the request between the two.
void add_oom_request(const mem::Analysis& a, const EventAxis& axis, LinearChart& c) {
  if (axis.x.empty()) return;
  for (const mem::Oom& o : a.ooms) {
    const double y = static_cast<double>(o.requested_bytes);
    c.series.push_back({fmt::format("OOM request: {} asked at event {}", human(o.requested_bytes),
                                    o.event),
                        kFitColour, SeriesStyle::kDashedLine, {axis.x.front(), axis.x.back()},
                        {y, y}, {}});
    const double x = axis.at(o.event);
    c.marks.push_back({x, static_cast<double>(o.free_bytes),
                       "free in all " + human(o.free_bytes),
                       fmt::format("OOM at {}: {} free in all ({} cached in segments + {} on the "
                                   "device)",
                                   where(a, axis, o.event), exact(o.free_bytes),
                                   exact(o.cached_free_bytes), exact(o.device_free_bytes)),
                       true, false});
    c.marks.push_back({x, static_cast<double>(o.largest_free_block_bytes),
                       "largest free block " + human(o.largest_free_block_bytes),
                       fmt::format("OOM at {}: the largest free block in a segment {}, {} asked",
                                   where(a, axis, o.event), exact(o.largest_free_block_bytes),
                                   exact(o.requested_bytes)),
                       true, false});
  }
}

// With an OOM: the largest free block over the events against the failed request, on its own
// scale (beside reserved − allocated, whose gigabytes would flatten both).
void append_largest_free_block(const mem::Trace& t, const mem::Analysis& a,
                               const EventAxis& axis, const MemHtmlOptions& o,
                               fmt::memory_buffer& out) {
  put(out,
      "<p class=\"note\" id=\"largest-free-block\">The <b>largest free block</b> in any one "
      "segment after each event (per column its lowest: where a request stops fitting), and "
      "the failed request as a dashed red line. At the OOM the rings mark the largest free "
      "block and the free bytes in all (cached in segments + what the driver still had): an "
      "OOM from fragmentation is the request above the largest block and below the free bytes "
      "in all.</p>");
  LinearChart c;
  c.title = "largest free block, and the OOM request";
  c.x_title = axis.title;
  c.empty_note = "the trace has no events";
  c.height = kSmallChartHeight;
  c.y_unit_names = true;
  const std::vector<uint64_t> largest = mem::largest_free_block_series(t);
  std::vector<uint64_t> negated(largest.size());
  for (size_t i = 0; i < largest.size(); ++i) negated[i] = UINT64_MAX - largest[i];
  const std::vector<Bucket> buckets = bucket_maxima(axis.x, negated, columns_of(o));
  LinearSeries s{"largest free block", kLargestColour, SeriesStyle::kLine, {}, {}, {}};
  const StepLine line = step_line(buckets);
  s.x = line.x;
  for (size_t e : line.event) s.y.push_back(static_cast<double>(largest[e]));
  for (const Bucket& b : buckets) {
    const mem::Sample at = a.timeline.samples[b.peak];
    c.hover_x.push_back((b.left + b.right) / 2);
    c.hover_tips.push_back(fmt::format("{}\nlargest free block {}\nreserved − allocated {}",
                                       bucket_text(a, axis, b, "largest free block (the lowest)"),
                                       exact(largest[b.peak]),
                                       exact(minus(at.reserved, at.allocated))));
  }
  if (!s.x.empty()) c.series.push_back(std::move(s));
  add_rules(a, axis, c);
  add_oom_request(a, axis, c);
  append_linear_figure(c, "Largest free block and the OOM request", out);
}

void append_fragmentation(const mem::Trace& t, const mem::Analysis& a, const EventAxis& axis,
                          const MemHtmlOptions& o, fmt::memory_buffer& out) {
  put(out,
      "<section id=\"fragmentation\"><h2>Fragmentation</h2><p class=\"note\">Reserved − "
      "allocated after each event: bytes the allocator holds that the program does not (cached "
      "free blocks, and blocks freed but still in use by a stream). The hover text also gives "
      "1 − allocated / reserved.</p>");
  LinearChart c;
  c.title = "reserved − allocated";
  c.x_title = axis.title;
  c.empty_note = "the trace has no events";
  c.height = kSmallChartHeight;
  c.y_unit_names = true;
  const mem::Samples& samples = a.timeline.samples;
  std::vector<uint64_t> free(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const mem::Sample at = samples[i];
    free[i] = minus(at.reserved, at.allocated);
  }
  const std::vector<Bucket> buckets = bucket_maxima(axis.x, free, columns_of(o));
  LinearSeries s =
      step_series("reserved − allocated", 1, SeriesStyle::kArea, axis.x, free, columns_of(o));
  for (const Bucket& b : buckets) {
    const mem::Sample at = samples[b.peak];
    c.hover_x.push_back((b.left + b.right) / 2);
    c.hover_tips.push_back(fmt::format(
        "{}\nreserved − allocated {}\n1 − allocated / reserved {:.1f}%\nreserved {}\nallocated "
        "{}\nactive {}",
        bucket_text(a, axis, b, "reserved − allocated"), exact(free[b.peak]),
        at.reserved > 0
            ? 100 * (1 - static_cast<double>(at.allocated) / static_cast<double>(at.reserved))
            : 0.0,
        exact(at.reserved), exact(at.allocated), exact(at.active)));
  }
  if (!s.x.empty()) c.series.push_back(std::move(s));
  add_rules(a, axis, c);
  append_linear_figure(c, "Fragmentation", out);
  if (!a.ooms.empty() && !t.events.empty()) append_largest_free_block(t, a, axis, o, out);
  put(out, "</section>\n");
}

// The fitted steps: complete ones (not the last, nor the first when the ring buffer cut it);
// the same rule as mem::creep.
size_t first_fitted_step(const mem::Analysis& a) { return a.timeline.dropped_frees > 0 ? 1 : 0; }

std::string step_tip(const mem::Analysis& a, size_t i, bool fitted) {
  const mem::StepFigures& f = a.per_step[i];
  const size_t last =
      i + 1 < a.per_step.size() ? a.per_step[i + 1].first_event - 1 : a.timeline.samples.size() - 1;
  return fmt::format(
      "step {} · events {}–{}\nminimum allocated {}\npeak allocated {}\npeak reserved {}{}", i + 1,
      f.first_event, last, exact(f.min_allocated), exact(f.peak_allocated), exact(f.peak_reserved),
      fitted ? "" : "\nnot in the fit (a step the trace may have cut)");
}

// The steps drawn: all of them, or with more steps than columns, per column the step with the
// lowest minimum (the quantity a leak raises: its low points are what matters).
std::vector<size_t> drawn_steps(const mem::Analysis& a, size_t columns) {
  std::vector<size_t> steps;
  if (a.per_step.size() <= columns) {
    for (size_t i = 0; i < a.per_step.size(); ++i) steps.push_back(i);
    return steps;
  }
  std::vector<double> x;
  std::vector<uint64_t> mins;
  for (size_t i = 0; i < a.per_step.size(); ++i) {
    x.push_back(static_cast<double>(i + 1));
    mins.push_back(a.per_step[i].min_allocated);
  }
  for (const Bucket& b : bucket_maxima(x, mins, columns)) {
    steps.push_back(
        static_cast<size_t>(std::min_element(mins.begin() + static_cast<std::ptrdiff_t>(b.begin),
                                             mins.begin() + static_cast<std::ptrdiff_t>(b.end)) -
                            mins.begin()));
  }
  return steps;
}

void append_steps(const mem::Analysis& a, const MemHtmlOptions& o, fmt::memory_buffer& out) {
  put(out,
      "<section id=\"steps\"><h2>Per-step minimum</h2><p class=\"note\">The smallest allocated "
      "value of each step: what stays from one step to the next. A rising minimum is a leak; "
      "the dashed line is the least-squares fit over the complete steps.</p>");
  const mem::Creep& creep = a.creep;
  LinearChart c;
  c.title = "minimum allocated per step";
  c.x_title = "step";
  c.empty_note = "no steps found (--step-regex names the function that starts a step)";
  c.y_from_zero = false;
  c.height = kSmallChartHeight;
  c.y_unit_names = true;
  const size_t first = first_fitted_step(a);
  const std::vector<size_t> drawn = drawn_steps(a, columns_of(o));
  if (drawn.size() < a.per_step.size()) {
    putf(out,
         "<p class=\"note\">{} steps drawn as {} points: each the step with the lowest minimum "
         "in its run of consecutive steps.</p>",
         a.per_step.size(), drawn.size());
  }
  LinearSeries line{"", 0, SeriesStyle::kLine, {}, {}, {}};
  LinearSeries points{"minimum allocated", 0, SeriesStyle::kPoints, {}, {}, {}};
  for (size_t i : drawn) {
    const double x = static_cast<double>(i + 1);
    const double y = static_cast<double>(a.per_step[i].min_allocated);
    line.x.push_back(x);
    line.y.push_back(y);
    points.x.push_back(x);
    points.y.push_back(y);
    points.tips.push_back(step_tip(a, i, i >= first && i < first + creep.steps));
  }
  c.series.push_back(std::move(line));
  c.series.push_back(std::move(points));
  if (creep.verdict != "too few steps" && creep.steps >= 2) {
    // The fit's line through the mean: y(j) = mean + slope · (j − (n − 1) / 2), j = 0 .. n − 1.
    double mean = 0;
    for (uint64_t v : creep.step_min) mean += static_cast<double>(v);
    mean /= static_cast<double>(creep.step_min.size());
    const double mid = static_cast<double>(creep.step_min.size() - 1) / 2;
    LinearSeries fit{
        fmt::format("fit: {}/step ({})", signed_bytes(creep.slope_bytes_per_step), creep.verdict),
        kFitColour,
        SeriesStyle::kDashedLine,
        {},
        {},
        {}};
    for (double j : {0.0, static_cast<double>(creep.step_min.size() - 1)}) {
      fit.x.push_back(static_cast<double>(first) + j + 1);
      fit.y.push_back(mean + creep.slope_bytes_per_step * (j - mid));
    }
    c.series.push_back(std::move(fit));
  }
  append_linear_figure(c, "Per-step minimum and creep", out);
  put(out, "</section>\n");
}

std::string ran_out_text(const mem::Analysis& a, const EventAxis& axis,
                         const mem::ReplayResult& r) {
  if (r.ran_out) {
    return fmt::format("yes: at {}, {} asked", where(a, axis, r.first_failure_event),
                       human(r.first_failure_bytes));
  }
  return r.capacity == 0 ? "no (no capacity set)" : "no";
}

void append_policy_table(const mem::Analysis& a, const EventAxis& axis,
                         const std::vector<mem::ReplayResult>& policies, fmt::memory_buffer& out) {
  uint64_t best = UINT64_MAX;
  for (const mem::ReplayResult& r : policies) best = std::min(best, r.peak_reserved);
  put(out,
      "<table class=\"rows policies\"><tr><th>policy</th><th>description</th><th>peak "
      "reserved</th><th>fragmentation</th><th>segment allocs</th><th>segment frees</th><th>cache "
      "flushes</th><th>ran out at capacity?</th><th>served the recorded OOM?</th></tr>");
  for (const mem::ReplayResult& r : policies) {
    put(out, "<tr><td>");
    put_escaped(out, r.policy);
    put(out, "</td><td>");
    put_escaped(out, r.description);
    putf(out,
         "</td><td class=\"num{}\" title=\"{} B\">{}</td><td class=\"num\">{:.1f}%</td>"
         "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>"
         "<td>{}</td></tr>",
         r.peak_reserved == best ? " best" : "", r.peak_reserved, human(r.peak_reserved),
         100 * r.fragmentation, r.segment_allocs, r.segment_frees, r.cache_flushes,
         ran_out_text(a, axis, r),
         a.ooms.empty()          ? "— (no OOM recorded)"
         : r.served_recorded_oom ? "yes"
                                 : "no");
  }
  put(out, "</table>");
}

// Reserved bytes per policy, with what the trace recorded for reference.
void append_policy_chart(const mem::Analysis& a, const EventAxis& axis,
                         const std::vector<mem::ReplayResult>& policies, const MemHtmlOptions& o,
                         fmt::memory_buffer& out) {
  LinearChart c;
  c.title = "reserved bytes per policy";
  c.height = kSmallChartHeight;
  c.y_unit_names = true;
  bool on_axis = true;  // every replay has one value per event: the timeline's x
  for (const mem::ReplayResult& r : policies) {
    on_axis = on_axis && (r.reserved.empty() || r.reserved.size() == a.events);
  }
  c.x_title = on_axis ? axis.title : "event index";
  std::vector<double> index_x;
  auto x_for = [&](size_t n) -> const std::vector<double>& {
    if (on_axis) return axis.x;
    while (index_x.size() < n) index_x.push_back(static_cast<double>(index_x.size()));
    return index_x;
  };
  const std::vector<uint64_t> recorded = column(a.timeline.samples, &mem::Sample::reserved);
  if (!recorded.empty()) {
    c.series.push_back(step_series("recorded", kRecordedColour, SeriesStyle::kDashedLine,
                                   x_for(recorded.size()), recorded, columns_of(o)));
  }
  size_t longest = 0;
  for (size_t p = 0; p < policies.size(); ++p) {
    const std::vector<uint64_t>& v = policies[p].reserved;
    longest = v.size() > policies[longest].reserved.size() ? p : longest;
    if (v.empty()) continue;
    std::vector<double> x = x_for(v.size());
    x.resize(v.size());
    c.series.push_back(step_series(policies[p].policy,
                                   kPolicyColours[p % std::size(kPolicyColours)],
                                   SeriesStyle::kLine, x, v, columns_of(o)));
  }
  const std::vector<uint64_t>& widest = policies[longest].reserved;
  std::vector<double> x = x_for(widest.size());
  x.resize(widest.size());
  for (const Bucket& b : bucket_maxima(x, widest, columns_of(o))) {
    std::string tip = b.end - b.begin <= 1
                          ? where(a, axis, b.begin)
                          : fmt::format("events {}–{}: the most reserved", b.begin, b.end - 1);
    for (const mem::ReplayResult& r : policies) {
      if (b.begin < r.reserved.size()) {
        tip += fmt::format("\n{} {}", r.policy, exact(max_in(r.reserved, b.begin, b.end)));
      }
    }
    if (b.begin < recorded.size()) {
      tip += fmt::format("\nrecorded {}", exact(max_in(recorded, b.begin, b.end)));
    }
    c.hover_x.push_back((b.left + b.right) / 2);
    c.hover_tips.push_back(std::move(tip));
  }
  if (on_axis) add_rules(a, axis, c);
  append_linear_figure(c, "Reserved bytes per policy", out);
}

void append_policies(const mem::Analysis& a, const EventAxis& axis,
                     const std::vector<mem::ReplayResult>& policies, const MemHtmlOptions& o,
                     fmt::memory_buffer& out) {
  put(out, "<section id=\"policies\"><h2>Allocator policies</h2>");
  if (policies.empty()) {
    put(out,
        "<p class=\"note\">No allocator policy was replayed. To compare what other policies "
        "would have reserved for this same sequence of allocations, run <code>plumb mem report "
        "FILE --policies pytorch,expandable,...</code> (and <code>--capacity</code> to see "
        "which ones run out).</p></section>\n");
    return;
  }
  const uint64_t capacity = policies.front().capacity;
  put(out, "<p class=\"note\">The trace's allocations and frees replayed under each policy");
  if (capacity > 0) {
    putf(out, ", against a capacity of {} ({} B)", human(capacity), capacity);
  } else {
    put(out, ", with no capacity limit");
  }
  put(out, ". The lowest peak reserved is highlighted.</p>");
  append_policy_table(a, axis, policies, out);
  bool any_series = false;
  for (const mem::ReplayResult& r : policies) any_series = any_series || !r.reserved.empty();
  if (any_series) append_policy_chart(a, axis, policies, o, out);
  put(out, "</section>\n");
}

}  // namespace

std::vector<Bucket> bucket_maxima(const std::vector<double>& x, const std::vector<uint64_t>& values,
                                  size_t columns) {
  const size_t n = std::min(x.size(), values.size());
  std::vector<Bucket> buckets;
  if (n == 0) return buckets;
  const double x0 = x.front();
  const double span = x[n - 1] - x0;
  const size_t m = std::max<size_t>(columns, 1);
  auto column_of = [&](double v) {
    if (!(span > 0)) return size_t{0};
    const double c = std::floor((v - x0) / span * static_cast<double>(m));
    return std::min(m - 1, static_cast<size_t>(std::max(0.0, c)));
  };
  auto edge = [&](size_t c) { return x0 + span * static_cast<double>(c) / static_cast<double>(m); };
  for (size_t i = 0; i < n;) {
    const size_t c = column_of(x[i]);
    Bucket b{i, i, i, edge(c), edge(c + 1)};
    for (; b.end < n && column_of(x[b.end]) == c; ++b.end) {
      if (values[b.end] > values[b.peak]) b.peak = b.end;
    }
    i = b.end;
    buckets.push_back(b);
  }
  return buckets;
}

StepLine step_line(const std::vector<Bucket>& buckets) {
  StepLine line;
  for (size_t g = 0; g < buckets.size(); ++g) {
    const Bucket& b = buckets[g];
    auto add = [&](double x, size_t event) {
      line.x.push_back(x);
      line.event.push_back(event);
    };
    if (g > 0) add(b.left, buckets[g - 1].end - 1);
    add(b.left, b.peak);
    add(b.right, b.peak);
    add(b.right, b.end - 1);
  }
  return line;
}

void render_mem_html(const mem::Trace& t, const mem::Analysis& a,
                     const std::vector<mem::ReplayResult>& policies, const MemHtmlOptions& o,
                     fmt::memory_buffer& out) {
  const EventAxis axis = event_axis(t, o.by_event_index);
  append_head(a, out);
  append_header(t, a, axis, out);
  append_timeline(t, a, axis, o, out);
  append_fragmentation(t, a, axis, o, out);
  append_steps(a, o, out);
  append_policies(a, axis, policies, o, out);
  out.append(kPageEnd.data(), kPageEnd.data() + kPageEnd.size());
}

void write_mem_html(const mem::Trace& t, const mem::Analysis& a,
                    const std::vector<mem::ReplayResult>& policies, const MemHtmlOptions& o,
                    std::ostream& out) {
  fmt::memory_buffer page;
  render_mem_html(t, a, policies, o, page);
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
}

}  // namespace plumb::report
