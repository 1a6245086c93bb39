#include "report/step_html.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/units.h"
#include "report/html_out.h"
#include "report/html_style.h"
#include "report/step_console_reporter.h"
#include "report/step_group_name.h"
#include "report/svg_chart.h"
#include "step/classify.h"

namespace plumb::report {
namespace {

// After kPageStyle (html_style.h). One colour per activity, the same in the bars, the swimlane
// and the legends; overlapped communication is compute's blue hatched with communication's orange.
constexpr std::string_view kStepStyle = R"(
ul.facts{margin:4px 0 8px;padding-left:20px}
svg.bars,svg.lanes{width:100%;max-width:1300px;height:auto;display:block}
.a-compute{fill:#1f6fb4}.a-communication{fill:#e8710a}.a-overlapped{fill:url(#hatch)}
.a-memory{fill:#2ca02c}.a-idle{fill:#e4e4e4}
.bar:hover rect,.lane rect:hover{stroke:#000;stroke-width:.8}
.label{font-size:11px;fill:#222}
td.num{white-space:nowrap}
td.group{white-space:nowrap}.pg{font-size:11px;color:#888}
td.kernel{font-family:monospace;font-size:12px;word-break:break-all}
)";

constexpr double kBarsWidth = 960;
constexpr double kLabelWidth = 150;  // the row labels left of the plot
constexpr double kRightMargin = 20;
constexpr double kTopMargin = 8;
constexpr double kAxisHeight = 34;  // ticks and the axis title under the plot
constexpr double kBarHeight = 14;
constexpr double kBarGap = 4;
constexpr double kStepGap = 8;      // more room between two steps' groups of bars
constexpr double kTrackHeight = 7;  // one activity of one rank in the swimlane
constexpr double kLaneGap = 8;
constexpr double kMergePixels = 0.5;  // swimlane pieces closer than this are drawn as one
constexpr double kMicrosPerMilli = 1000;
constexpr double kMinPlotMillis = 1e-3;  // an empty plot still has an axis
constexpr size_t kShownGroupId = 24;  // a longer profiler group id is cut (whole in the tooltip)

constexpr step::Activity kTracks[] = {step::Activity::kCompute, step::Activity::kCommunication,
                                      step::Activity::kMemory};

double or_zero(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

std::string_view activity_class(step::Activity a) {
  switch (a) {
    case step::Activity::kCompute: return "compute";
    case step::Activity::kCommunication: return "communication";
    case step::Activity::kMemory: return "memory";
  }
  return "compute";
}

std::string step_text(int64_t step) {
  return step < 0 ? std::string("whole trace") : fmt::format("{}", step);
}

// A plot of `rows` rows of `row_height` under a time axis: x in ms from 0 to `max_ms`.
struct Plot {
  double max_ms = 1;
  double plot_width() const { return kBarsWidth - kLabelWidth - kRightMargin; }
  double x(double us) const {
    return kLabelWidth + plot_width() * std::clamp(us / kMicrosPerMilli / max_ms, 0.0, 1.0);
  }
};

// The longest bar or lane reaches the right edge.
Plot plot_for(double max_us) { return Plot{std::max(max_us / kMicrosPerMilli, kMinPlotMillis)}; }

// Grid lines over the plot's height, tick labels under it (those within the plot), the title.
void append_time_axis(const Plot& p, double top, double bottom, fmt::memory_buffer& out) {
  for (double t : linear_ticks(p.max_ms)) {
    if (t > p.max_ms * (1 + 1e-9)) break;
    const double x = p.x(t * kMicrosPerMilli);
    putf(out,
         "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>"
         "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4:g}</text>",
         x, top, bottom, bottom + 13, t);
  }
  putf(out,
       "<text class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">time (ms)</text>",
       kLabelWidth + p.plot_width() / 2, bottom + 28);
}

void append_head(const step::StepResult& r, fmt::memory_buffer& out) {
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
  putf(out, "<title>plumb step report · {} rank{}</title><style>", r.ranks.size(),
       r.ranks.size() == 1 ? "" : "s");
  put(out, kPageStyle);
  put(out, kStepStyle);
  put(out, "</style></head><body>\n");
}

const step::StepBreakdown* slowest_step(const step::StepResult& r, int* rank) {
  const step::StepBreakdown* slowest = nullptr;
  for (const step::RankSteps& ranks : r.ranks) {
    for (const step::StepBreakdown& s : ranks.steps) {
      if (slowest == nullptr || s.step_time_us > slowest->step_time_us) {
        slowest = &s;
        *rank = ranks.rank;
      }
    }
  }
  return slowest;
}

void append_header(const step::StepResult& r, fmt::memory_buffer& out) {
  const std::vector<int64_t> steps = step_numbers(r);
  putf(out, "<header><h1>plumb step report</h1><ul class=\"facts\"><li>{} rank{}", r.ranks.size(),
       r.ranks.size() == 1 ? "" : "s");
  if (r.world_size > 0) putf(out, " of a world of {}", r.world_size);
  putf(out, " · {} step{}</li>", steps.size(), steps.size() == 1 ? "" : "s");
  int rank = -1;
  if (const step::StepBreakdown* s = slowest_step(r, &rank)) {
    putf(out, "<li>Slowest: step <b>{}</b> on rank <b>{}</b>, {}</li>", s->step, rank,
         step_ms(s->step_time_us));
  }
  for (const step::Straggler& s : r.stragglers) {
    if (s.step != -1) continue;
    putf(out, "<li>Over the whole trace the others waited <b>{}</b> for rank <b>{}</b></li>",
         step_ms(s.waited_on_us), s.rank);
    break;
  }
  if (!r.baseline.empty()) {
    put(out, "<li>Baseline: ");
    put_escaped(out, r.baseline);
    put(out, "</li>");
  }
  if (!r.plan_source.empty()) {
    put(out, "<li>Plan: ");
    put_escaped(out, r.plan_source);
    put(out, "</li>");
  }
  put(out,
      "</ul><nav><a href=\"#breakdown\">Breakdown</a><a href=\"#swimlane\">Swimlane</a>"
      "<a href=\"#stragglers\">Stragglers</a><a href=\"#collectives\">Slow collectives</a>"
      "<a href=\"#plan\">Plan</a><a href=\"#notes\">Notes</a><a href=\"#traces\">Traces</a>"
      "</nav></header>\n");
}

void append_key(std::string_view cls, std::string_view name, fmt::memory_buffer& out) {
  putf(out,
       "<span><svg class=\"key\" viewBox=\"0 0 28 10\"><rect class=\"a-{}\" x=\"1\" y=\"1\" "
       "width=\"26\" height=\"8\"/></svg>{}</span>",
       cls, name);
}

// One bar: the step's time split left to right (compute alone, overlapped, exposed
// communication, memory, idle), with the figures in its tooltip.
struct BarRow {
  int rank = -1;
  const step::StepBreakdown* step = nullptr;
};

void append_bar(const Plot& p, const BarRow& row, double y, fmt::memory_buffer& out) {
  const step::StepBreakdown& s = *row.step;
  const double compute = or_zero(s.compute_us);
  const double overlapped = std::min(or_zero(s.overlapped_us), compute);
  const std::array<std::pair<std::string_view, double>, 5> parts = {{
      {"compute", compute - overlapped},
      {"overlapped", overlapped},
      {"communication", or_zero(s.exposed_communication_us)},
      {"memory", or_zero(s.memory_us)},
      {"idle", or_zero(s.idle_us)},
  }};
  putf(out,
       "<g class=\"bar\"><title>step {} · rank {}: {}\ncompute {} (overlapped with communication "
       "{})\nexposed communication {}\nmemory {}\nidle {}</title>",
       s.step, row.rank, step_ms(s.step_time_us), step_ms(s.compute_us), step_ms(s.overlapped_us),
       step_ms(s.exposed_communication_us), step_ms(s.memory_us), step_ms(s.idle_us));
  putf(out,
       "<text class=\"label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">step {} · rank "
       "{}</text>",
       kLabelWidth - 6, y + kBarHeight - 3, s.step, row.rank);
  double at = 0;
  for (const auto& [cls, us] : parts) {
    const double x0 = p.x(at);
    at += us;
    const double x1 = p.x(at);
    if (x1 - x0 <= 0) continue;
    putf(out, "<rect class=\"a-{}\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\"/>",
         cls, x0, y, x1 - x0, kBarHeight);
  }
  put(out, "</g>");
}

void append_breakdown(const step::StepResult& r, fmt::memory_buffer& out) {
  put(out, "<section id=\"breakdown\"><h2>Breakdown per rank and step</h2>");
  std::vector<std::vector<BarRow>> groups;  // per step
  size_t bars = 0;
  size_t steps_left = 0;
  double max_us = 0;
  for (int64_t number : step_numbers(r)) {
    std::vector<BarRow> rows;
    for (const step::RankSteps& rank : r.ranks) {
      for (const step::StepBreakdown& s : rank.steps) {
        if (s.step == number) rows.push_back({rank.rank, &s});
      }
    }
    if (bars + rows.size() > kMaxStepBars && !groups.empty()) {
      ++steps_left;
      continue;
    }
    bars += rows.size();
    for (const BarRow& b : rows) max_us = std::max(max_us, or_zero(b.step->step_time_us));
    groups.push_back(std::move(rows));
  }
  if (bars == 0) {
    put(out, "<p class=\"note\">No step was found in the traces.</p></section>\n");
    return;
  }
  put(out,
      "<p class=\"note\">Each bar is one rank's step: compute + exposed communication + memory + "
      "idle = the step time; the hatched part is communication that ran under compute "
      "(overlapped, counted in compute).</p>");
  if (steps_left > 0) {
    putf(out,
         "<p class=\"note\">{} more step{} not drawn (at most {} bars); the JSON output has "
         "every step.</p>",
         steps_left, steps_left == 1 ? " is" : "s are", kMaxStepBars);
  }
  put(out,
      "<figure class=\"chart\"><figcaption>Where each step's time went</figcaption>"
      "<div class=\"legend\">");
  append_key("compute", "compute", out);
  append_key("overlapped", "overlapped communication", out);
  append_key("communication", "exposed communication", out);
  append_key("memory", "memory (copies, sets)", out);
  append_key("idle", "idle", out);
  put(out, "</div>");
  const Plot p = plot_for(max_us);
  const double rows_height = static_cast<double>(bars) * (kBarHeight + kBarGap) +
                             static_cast<double>(groups.size() - 1) * kStepGap;
  const double bottom = kTopMargin + rows_height;
  putf(out, "<svg class=\"bars\" viewBox=\"0 0 {} {:.0f}\" role=\"img\">", kBarsWidth,
       bottom + kAxisHeight);
  put(out,
      "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#1f6fb4\"/>"
      "<rect width=\"3\" height=\"6\" fill=\"#e8710a\"/></pattern></defs>");
  append_time_axis(p, kTopMargin, bottom, out);
  double y = kTopMargin;
  for (const std::vector<BarRow>& rows : groups) {
    for (const BarRow& row : rows) {
      append_bar(p, row, y, out);
      y += kBarHeight + kBarGap;
    }
    y += kStepGap;
  }
  put(out, "</svg></figure></section>\n");
}

// One drawn piece of a swimlane track: intervals closer than kMergePixels drawn as one.
struct Piece {
  double x0 = 0;
  double x1 = 0;
  double start_us = 0;
  double end_us = 0;
  size_t count = 0;
};

std::vector<Piece> pieces(const Plot& p, const step::Lane& lane, step::Activity a) {
  std::vector<const step::Lane::Interval*> intervals;
  for (const step::Lane::Interval& i : lane.intervals) {
    if (i.activity == a && i.end_us > i.start_us) intervals.push_back(&i);
  }
  std::sort(intervals.begin(), intervals.end(),
            [](const auto* x, const auto* y) { return x->start_us < y->start_us; });
  std::vector<Piece> out;
  for (const step::Lane::Interval* i : intervals) {
    const double x0 = p.x(i->start_us);
    const double x1 = p.x(i->end_us);
    if (!out.empty() && x0 - out.back().x1 < kMergePixels) {
      Piece& last = out.back();
      last.x1 = std::max(last.x1, x1);
      last.end_us = std::max(last.end_us, i->end_us);
      ++last.count;
      continue;
    }
    out.push_back({x0, x1, i->start_us, i->end_us, 1});
  }
  return out;
}

// A rank's own span of the swimlane step, on the swimlane's clock (from the step's earliest start
// on any rank): drawn behind its tracks, so that idle time and a late start show.
struct LaneSpan {
  double start_us = 0;
  double end_us = 0;
  bool known = false;
};

std::vector<LaneSpan> lane_spans(const step::StepResult& r) {
  double earliest = std::numeric_limits<double>::infinity();
  for (const step::RankSteps& rank : r.ranks) {
    for (const step::StepBreakdown& s : rank.steps) {
      if (s.step == r.swimlane_step) earliest = std::min(earliest, s.start_us);
    }
  }
  std::vector<LaneSpan> spans;
  for (const step::Lane& lane : r.swimlane) {
    LaneSpan span;
    for (const step::RankSteps& rank : r.ranks) {
      for (const step::StepBreakdown& s : rank.steps) {
        if (rank.rank != lane.rank || s.step != r.swimlane_step) continue;
        span = {s.start_us - earliest, s.start_us - earliest + or_zero(s.step_time_us), true};
      }
    }
    spans.push_back(span);
  }
  return spans;
}

void append_lane(const Plot& p, const step::Lane& lane, const LaneSpan& span, double y,
                 fmt::memory_buffer& out) {
  putf(out,
       "<g class=\"lane\"><text class=\"label\" x=\"{:.1f}\" y=\"{:.1f}\" "
       "text-anchor=\"end\">rank {}</text>",
       kLabelWidth - 6, y + 1.5 * kTrackHeight + 4, lane.rank);
  if (span.known && span.end_us > span.start_us) {
    putf(out,
         "<rect class=\"a-idle\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\">"
         "<title>rank {} · step {:.3f}–{:.3f} ms</title></rect>",
         p.x(span.start_us), y, p.x(span.end_us) - p.x(span.start_us),
         std::size(kTracks) * kTrackHeight - 1, lane.rank, span.start_us / kMicrosPerMilli,
         span.end_us / kMicrosPerMilli);
  }
  for (size_t t = 0; t < std::size(kTracks); ++t) {
    const std::string_view cls = activity_class(kTracks[t]);
    const double top = y + static_cast<double>(t) * kTrackHeight;
    for (const Piece& piece : pieces(p, lane, kTracks[t])) {
      putf(out,
           "<rect class=\"a-{}\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\">"
           "<title>rank {} · {} {:.3f}–{:.3f} ms{}</title></rect>",
           cls, piece.x0, top, std::max(piece.x1 - piece.x0, kMergePixels), kTrackHeight - 1,
           lane.rank, cls, piece.start_us / kMicrosPerMilli, piece.end_us / kMicrosPerMilli,
           piece.count > 1 ? fmt::format(" ({} intervals)", piece.count) : "");
    }
  }
  put(out, "</g>");
}

void append_swimlane(const step::StepResult& r, fmt::memory_buffer& out) {
  put(out, "<section id=\"swimlane\"><h2>Swimlane");
  if (r.swimlane_step >= 0) putf(out, " of step {}", r.swimlane_step);
  put(out, "</h2>");
  if (r.swimlane.empty()) {
    put(out, "<p class=\"note\">No swimlane: no step was drawn.</p></section>\n");
    return;
  }
  // To the last interval's or the last rank's step end.
  const std::vector<LaneSpan> spans = lane_spans(r);
  double max_us = 0;
  for (size_t l = 0; l < r.swimlane.size(); ++l) {
    for (const step::Lane::Interval& i : r.swimlane[l].intervals) {
      max_us = std::max(max_us, or_zero(i.end_us));
    }
    if (spans[l].known) max_us = std::max(max_us, or_zero(spans[l].end_us));
  }
  put(out,
      "<p class=\"note\">One row per rank, from the step's earliest start on any rank: compute "
      "on top, communication in the middle, memory copies and sets at the bottom. Where compute "
      "and communication run at once, the communication is overlapped. The grey band is the "
      "rank's own step: where it shows, the device was idle.</p>"
      "<figure class=\"chart\"><figcaption>The step across ranks</figcaption><div "
      "class=\"legend\">");
  append_key("compute", "compute", out);
  append_key("communication", "communication", out);
  append_key("memory", "memory", out);
  append_key("idle", "the rank's step", out);
  put(out, "</div>");
  const Plot p = plot_for(max_us);
  const double lane_height = std::size(kTracks) * kTrackHeight + kLaneGap;
  const double bottom = kTopMargin + static_cast<double>(r.swimlane.size()) * lane_height;
  putf(out, "<svg class=\"lanes\" viewBox=\"0 0 {} {:.0f}\" role=\"img\">", kBarsWidth,
       bottom + kAxisHeight);
  append_time_axis(p, kTopMargin, bottom, out);
  double y = kTopMargin;
  for (size_t l = 0; l < r.swimlane.size(); ++l) {
    append_lane(p, r.swimlane[l], spans[l], y, out);
    y += lane_height;
  }
  put(out, "</svg></figure></section>\n");
}

void append_stragglers(const step::StepResult& r, fmt::memory_buffer& out) {
  put(out, "<section id=\"stragglers\"><h2>Stragglers</h2>");
  if (r.stragglers.empty()) {
    put(out,
        "<p class=\"note\">No straggler: no collective was matched across ranks.</p>"
        "</section>\n");
    return;
  }
  const step::MatchSummary& m = r.matching;
  putf(out,
       "<p class=\"note\">The rank the others waited for inside collectives, and how long they "
       "waited in all{}.</p><table class=\"rows stragglers\"><tr><th>step</th><th>rank</th>"
       "<th>the others waited</th></tr>",
       m.instances == 0
           ? ""
           : fmt::format(", over the {} of {} collective instances matched across the ranks{}",
                         m.matched, m.instances,
                         m.unaligned > 0 ? fmt::format(" ({} did not line up: left out, see "
                                                       "the notes)",
                                                       m.unaligned)
                                         : ""));
  for (const step::Straggler& s : r.stragglers) {
    putf(out, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
         step_text(s.step), s.rank, step_ms(s.waited_on_us));
  }
  put(out, "</table></section>\n");
}

double finite_baseline_share(const step::CollectiveInstance& c) {
  return c.baseline_busbw_gbps > 0 && std::isfinite(c.busbw_gbps)
             ? c.busbw_gbps / c.baseline_busbw_gbps
             : step::kNaN;
}

// The collectives furthest below their baseline when any has one, else the most exposed.
std::vector<const step::CollectiveInstance*> slow_collectives(const step::StepResult& r,
                                                              bool* by_baseline) {
  std::vector<const step::CollectiveInstance*> with_baseline;
  std::vector<const step::CollectiveInstance*> exposed;
  for (const step::CollectiveInstance& c : r.collectives) {
    if (!std::isnan(finite_baseline_share(c))) with_baseline.push_back(&c);
    if (c.exposed_us > 0) exposed.push_back(&c);
  }
  *by_baseline = !with_baseline.empty();
  std::vector<const step::CollectiveInstance*>& list = *by_baseline ? with_baseline : exposed;
  if (*by_baseline) {
    std::stable_sort(list.begin(), list.end(), [](const auto* a, const auto* b) {
      return finite_baseline_share(*a) < finite_baseline_share(*b);
    });
  } else {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto* a, const auto* b) { return a->exposed_us > b->exposed_us; });
  }
  if (list.size() > kMaxSlowCollectives) list.resize(kMaxSlowCollectives);
  return list;
}

std::string gbps_cell(double v) { return std::isnan(v) ? "—" : fmt::format("{:.2f}", v); }

// "2 of 8": the ranks of the group the set holds, of all its ranks. A trace that names no ranks
// for the group: of the world, as the analysis takes it (step/collectives.cc), when the world
// size is known.
std::string ranks_seen_text(const step::CollectiveInstance& c, int world_size) {
  if (!c.group_ranks.empty()) return fmt::format("{} of {}", c.ranks_seen, c.group_ranks.size());
  if (world_size > 0) return fmt::format("{} of {}", c.ranks_seen, world_size);
  return fmt::format("{} (group size unknown)", c.ranks_seen);
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string list;
  for (int r : ranks) list += fmt::format("{}{}", list.empty() ? "" : ",", r);
  return list;
}

// The group as the console names it (group_label), with the profiler's own id under it in grey
// when plumb named the group by its ranks, and every rank in the tooltip.
void append_group_cell(const step::CollectiveInstance& c, int world_size,
                       fmt::memory_buffer& out) {
  std::string tip = c.group.empty() ? "unnamed process group" : "process group " + c.group;
  tip += c.group_ranks.empty()
             ? " · its ranks are not in the trace (taken as the whole world)"
             : fmt::format(" · {} ranks: {}", c.group_ranks.size(), rank_list(c.group_ranks));
  put(out, "<td class=\"group\" title=\"");
  put_escaped(out, tip);
  put(out, "\">");
  put_escaped(out, group_label(c.group, c.group_ranks, world_size));
  if (made_up_group_name(c.group)) {
    put(out, "<br><span class=\"pg\">pg ");
    put_escaped(out, c.group.size() > kShownGroupId
                         ? c.group.substr(0, kShownGroupId) + "…"
                         : c.group);
    put(out, "</span>");
  }
  put(out, "</td>");
}

// The kernel's name without its parameter list (the whole signature is the tooltip).
void append_name_cell(const std::string& name, fmt::memory_buffer& out) {
  put(out, "<td class=\"kernel\" title=\"");
  put_escaped(out, name);
  put(out, "\">");
  put_escaped(out, name.substr(0, name.find('(')));
  put(out, "</td>");
}

void append_collective_row(const step::CollectiveInstance& c, int world_size, bool baselines,
                           fmt::memory_buffer& out) {
  putf(out, "<tr><td>{}</td><td>{}</td>", c.step, step::kind_name(c.kind));
  append_group_cell(c, world_size, out);
  putf(out,
       "<td class=\"num\">{}</td><td class=\"num\" title=\"{} B\">{}</td>"
       "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
       "<td class=\"num\">{}</td>",
       ranks_seen_text(c, world_size), c.bytes, c.bytes == 0 ? "?" : format_bytes(c.bytes),
       c.last_rank, c.ranks_seen < 2 ? "—" : step_ms(c.start_skew_us), step_ms(c.duration_us),
       gbps_cell(c.busbw_gbps));
  if (baselines) {
    putf(out, "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>",
         gbps_cell(c.baseline_busbw_gbps),
         std::isnan(finite_baseline_share(c))
             ? "—"
             : fmt::format("{:.0f}%", 100 * finite_baseline_share(c)));
    put_escaped(out, c.baseline_layer);
    put(out, "</td>");
  }
  putf(out, "<td class=\"num\">{}</td>", step_ms(c.exposed_us));
  append_name_cell(c.name, out);
  put(out, "</tr>");
}

void append_collectives_header(bool baselines, fmt::memory_buffer& out) {
  put(out,
      "<table class=\"rows collectives\"><tr><th>step</th><th>kind</th><th>group</th>"
      "<th title=\"ranks of the group whose traces hold this collective, of the group's "
      "ranks\">ranks seen</th><th>size</th><th>last rank</th><th>start skew</th>"
      "<th>duration</th><th>busbw (GB/s)</th>");
  if (baselines) put(out, "<th>baseline (GB/s)</th><th>of baseline</th><th>layer</th>");
  put(out, "<th>exposed</th><th>kernel</th></tr>");
}

void append_collectives(const step::StepResult& r, fmt::memory_buffer& out) {
  put(out, "<section id=\"collectives\"><h2>Slow collectives</h2>");
  bool by_baseline = false;
  const auto list = slow_collectives(r, &by_baseline);
  if (list.empty()) {
    put(out,
        "<p class=\"note\">No collective with a baseline or with exposed time.</p>"
        "</section>\n");
    return;
  }
  putf(out,
       "<p class=\"note\">{} of {} collective instances: {}. Duration and busbw are taken "
       "from the last rank's start to the end (the time the data moved). A group is named as "
       "the console names it: its own name, or <code>world</code> / <code>ranks</code> with its "
       "ranks when the profiler named it by an id (shown in grey; hover for every rank).</p>",
       list.size(), r.collectives.size(),
       by_baseline ? "the lowest busbw against the baseline first"
                   : "the most exposed first (no baseline to compare with: --baseline)");
  const bool baselines = by_baseline || !r.baseline.empty();
  append_collectives_header(baselines, out);
  for (const step::CollectiveInstance* c : list) {
    append_collective_row(*c, r.world_size, baselines, out);
  }
  put(out, "</table></section>\n");
}

void append_plan(const step::StepResult& r, fmt::memory_buffer& out) {
  put(out, "<section id=\"plan\"><h2>Against the plan</h2>");
  if (r.plan.empty()) {
    put(out,
        "<p class=\"note\">No plan given: <code>plumb step ... --plan FILE</code> puts "
        "<code>plumb plan</code>'s prediction beside what was measured.</p></section>\n");
    return;
  }
  put(out, "<p class=\"note\">Plan: ");
  put_escaped(out, r.plan_source);
  put(out,
      "</p><table class=\"rows plan\"><tr><th>component</th><th>measured</th><th>predicted</th>"
      "<th>measured / predicted</th></tr>");
  for (const step::PlanRow& p : r.plan) {
    const double ratio = p.predicted_us > 0 ? p.measured_us / p.predicted_us : step::kNaN;
    put(out, "<tr><td>");
    put_escaped(out, p.component);
    putf(out,
         "</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
         "</tr>",
         step_ms(p.measured_us), step_ms(p.predicted_us),
         std::isnan(ratio) ? "—" : fmt::format("{:.2f}", ratio));
  }
  put(out, "</table></section>\n");
}

void append_notes(const step::StepResult& r, fmt::memory_buffer& out) {
  put(out, "<section id=\"notes\"><h2>Notes</h2>");
  if (r.notes.empty()) {
    put(out, "<p class=\"note\">None.</p></section>\n");
    return;
  }
  put(out, "<ul class=\"warnings\">");
  for (const std::string& n : r.notes) {
    put(out, "<li>");
    put_escaped(out, n);
    put(out, "</li>");
  }
  put(out, "</ul></section>\n");
}

void append_traces(const step::StepResult& r, fmt::memory_buffer& out) {
  put(out,
      "<section id=\"traces\"><h2>Traces</h2><table class=\"rows traces\"><tr><th>rank</th>"
      "<th>format</th><th>steps</th><th>source</th></tr>");
  for (const step::RankSteps& rank : r.ranks) {
    putf(out, "<tr><td class=\"num\">{}</td><td>", rank.rank);
    put_escaped(out, rank.format);
    putf(out, "</td><td class=\"num\">{}</td><td>", rank.steps.size());
    put_escaped(out, rank.source);
    put(out, "</td></tr>");
  }
  put(out, "</table></section>\n");
}

}  // namespace

void render_step_html(const step::StepResult& result, fmt::memory_buffer& out) {
  append_head(result, out);
  append_header(result, out);
  append_breakdown(result, out);
  append_swimlane(result, out);
  append_stragglers(result, out);
  append_collectives(result, out);
  append_plan(result, out);
  append_notes(result, out);
  append_traces(result, out);
  out.append(kPageEnd.data(), kPageEnd.data() + kPageEnd.size());
}

void write_step_html(const step::StepResult& result, std::ostream& out) {
  fmt::memory_buffer page;
  render_step_html(result, page);
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
}

}  // namespace plumb::report
