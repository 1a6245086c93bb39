#include "report/html_charts.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "report/html_escape.h"
#include "report/round_spread.h"
#include "report/svg_chart.h"

namespace plumb::report {
namespace {

using DiffKey = std::tuple<std::string_view, std::string_view, std::string_view, uint64_t>;
using DiffIndex = std::map<DiffKey, const baseline::RowDiff*>;

constexpr int kDashStyles = 3;  // solid, dashed, dotted: then they repeat

DiffIndex regressions_of(const baseline::Diff* diff) {
  DiffIndex index;
  if (diff == nullptr) return index;
  for (const baseline::RowDiff& r : diff->rows) {
    if (r.verdict == baseline::Verdict::kRegression) {
      index.emplace(DiffKey{r.layer, r.collective, r.dtype, r.bytes}, &r);
    }
  }
  return index;
}

std::string size_with_bytes(uint64_t bytes) {
  return fmt::format("{} ({} B)", size_label(static_cast<double>(bytes)), bytes);
}

std::string change_text(double change) {
  return std::isnan(change) ? "—" : fmt::format("{:+.1f}%", change * 100);
}

std::string regression_text(const baseline::RowDiff* r) {
  if (r == nullptr) return "";
  return fmt::format(" · REGRESSION: busbw {}, p99 {}", change_text(r->busbw_change),
                     change_text(r->p99_change));
}

// Everything the tooltips of one series need.
struct SeriesContext {
  char letter;
  const ChartData& chart;
  const Curve& curve;
  const DiffIndex& regressions;
  double threshold;
};

const baseline::RowDiff* regression_at(const SeriesContext& c, const CurvePoint& p) {
  if (c.letter != 'B') return nullptr;
  const auto it =
      c.regressions.find(DiffKey{c.chart.layer, c.chart.collective, c.curve.dtype, p.bytes});
  return it == c.regressions.end() ? nullptr : it->second;
}

// " · spread over the rounds ±2.1%" (spread_text, the results table's figure); "" when measured
// once.
std::string spread_tip(double spread) {
  return std::isnan(spread) ? ""
                            : fmt::format(" · spread over the rounds ±{}", spread_text(spread));
}

// With a spread over the rounds, an error bar of ± that spread (median ± median absolute
// deviation).
ChartPoint busbw_point(const SeriesContext& c, const CurvePoint& p) {
  const baseline::RowDiff* reg = regression_at(c, p);
  ChartPoint point{
      static_cast<double>(p.bytes), p.busbw_gbps, reg != nullptr,
      fmt::format("{} · {} · {} · busbw {:.3f} GB/s · slowest of {} group(s): "
                  "{}{}{}",
                  c.letter, c.curve.dtype, size_with_bytes(p.bytes), p.busbw_gbps, p.groups,
                  p.busbw_group, spread_tip(p.busbw_spread), regression_text(reg))};
  if (std::isfinite(p.busbw_spread) && p.busbw_spread > 0) {
    point.y_low = p.busbw_gbps * (1 - p.busbw_spread);
    point.y_high = p.busbw_gbps * (1 + p.busbw_spread);
  }
  return point;
}

// A regression is judged on busbw; the p99 point is ringed too when p99 also rose beyond the
// threshold.
ChartPoint p99_point(const SeriesContext& c, const CurvePoint& p) {
  const baseline::RowDiff* reg = regression_at(c, p);
  const bool p99_worse = reg != nullptr && reg->p99_change >= c.threshold;
  return {static_cast<double>(p.bytes), p.p99_us, p99_worse,
          fmt::format("{} · {} · {} · p99 {:.4g} µs · highest of {} group(s): {}{}", c.letter,
                      c.curve.dtype, size_with_bytes(p.bytes), p.p99_us, p.groups, p.p99_group,
                      regression_text(reg))};
}

std::vector<std::string> dtypes_of(const ChartData& chart) {
  std::vector<std::string> dtypes;
  for (const auto* curves : {&chart.a, &chart.b}) {
    for (const Curve& c : *curves) {
      if (std::find(dtypes.begin(), dtypes.end(), c.dtype) == dtypes.end()) {
        dtypes.push_back(c.dtype);
      }
    }
  }
  return dtypes;
}

struct Panels {
  Panel busbw{"busbw (GB/s) · slowest group", "no busbw measured", YScale::kLinear, false, {}};
  Panel p99{"p99 latency · slowest group", "no p99 latency (imported logs have none)",
            YScale::kLog, true, {}};
};

void add_series(const SeriesContext& c, int colour, int dash, Panels& panels) {
  const std::string name = fmt::format("{} · {}", c.letter, c.curve.dtype);
  ChartSeries busbw{name, colour, dash, {}};
  ChartSeries p99{name, colour, dash, {}};
  busbw.points.reserve(c.curve.points.size());
  p99.points.reserve(c.curve.points.size());
  for (const CurvePoint& p : c.curve.points) {
    busbw.points.push_back(busbw_point(c, p));
    p99.points.push_back(p99_point(c, p));
  }
  panels.busbw.series.push_back(std::move(busbw));
  panels.p99.series.push_back(std::move(p99));
}

bool any_error_bar(const Panel& panel) {
  for (const ChartSeries& s : panel.series) {
    for (const ChartPoint& p : s.points) {
      if (std::isfinite(p.y_low) && std::isfinite(p.y_high)) return true;
    }
  }
  return false;
}

void append_legend(const Panels& panels, bool any_marked, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  out.append(std::string_view("<div class=\"legend\">"));
  for (const ChartSeries& s : panels.busbw.series) {
    fmt::format_to(it,
                   "<span><svg class=\"key\" viewBox=\"0 0 28 10\"><line class=\"line s{0} "
                   "d{1}\" x1=\"1\" y1=\"5\" x2=\"27\" y2=\"5\"/></svg>",
                   s.colour, s.dash);
    append_escaped(out, s.name);
    out.append(std::string_view("</span>"));
  }
  if (any_error_bar(panels.busbw)) {
    out.append(std::string_view(
        "<span><svg class=\"key\" viewBox=\"0 0 28 10\"><path class=\"err\" "
        "d=\"M14 1V9M11 1H17M11 9H17\"/></svg>busbw ± its spread over the rounds</span>"));
  }
  if (any_marked) {
    out.append(
        std::string_view("<span><svg class=\"key\" viewBox=\"0 0 28 10\"><circle "
                         "class=\"reg\" cx=\"14\" cy=\"5\" r=\"4\"/></svg>regression</span>"));
  }
  out.append(std::string_view("</div>"));
}

bool any_marked(const Panel& panel) {
  for (const ChartSeries& s : panel.series) {
    for (const ChartPoint& p : s.points) {
      if (p.marked) return true;
    }
  }
  return false;
}

void append_figure(const ChartData& chart, const DiffIndex& regressions, double threshold,
                   fmt::memory_buffer& out) {
  const std::vector<std::string> dtypes = dtypes_of(chart);
  Panels panels;
  for (int side = 0; side < 2; ++side) {
    for (const Curve& curve : side == 0 ? chart.a : chart.b) {
      const auto dash = std::find(dtypes.begin(), dtypes.end(), curve.dtype) - dtypes.begin();
      add_series({side == 0 ? 'A' : 'B', chart, curve, regressions, threshold}, side,
                 static_cast<int>(dash % kDashStyles), panels);
    }
  }
  out.append(std::string_view("<figure class=\"chart\" data-layer=\""));
  append_escaped(out, chart.layer);
  out.append(std::string_view("\" data-collective=\""));
  append_escaped(out, chart.collective);
  out.append(std::string_view("\"><figcaption>"));
  append_escaped(out, chart.collective);
  out.append(std::string_view(" · layer "));
  append_escaped(out, chart.layer);
  out.append(std::string_view("</figcaption>"));
  append_legend(panels, any_marked(panels.busbw) || any_marked(panels.p99), out);
  out.append(std::string_view("<div class=\"panels\">"));
  draw_panel(panels.busbw, out);
  draw_panel(panels.p99, out);
  out.append(std::string_view("</div></figure>"));
}

}  // namespace

void append_charts(const std::vector<ChartData>& charts, const baseline::Diff* diff,
                   fmt::memory_buffer& out) {
  const DiffIndex regressions = regressions_of(diff);
  const double threshold = diff != nullptr ? diff->threshold : 0;
  out.append(std::string_view("<section id=\"charts\"><h2>Charts</h2>"));
  if (charts.empty()) out.append(std::string_view("<p class=\"note\">No result rows.</p>"));
  for (const ChartData& chart : charts) append_figure(chart, regressions, threshold, out);
  out.append(std::string_view("</section>"));
}

}  // namespace plumb::report
