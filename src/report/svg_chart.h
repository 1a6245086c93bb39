// One chart panel as inline SVG, drawn on the server side: a log2 size axis, a linear or log10
// value axis, one polyline with hoverable points per series, red rings on marked points. The
// HTML report puts two panels (busbw, p99 latency) in each (layer, collective) figure.
//
// No script is needed: hovering a point shows its SVG <title> (the browser's tooltip). Colours and
// dash patterns are CSS classes (s0/s1 per baseline, d0/d1/d2 per data type) that the page styles.
#pragma once

#include <fmt/format.h>

#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::report {

enum class YScale { kLinear, kLog };

struct ChartPoint {
  double x = 0;         // bytes; points with x ≤ 0 are skipped
  double y = 0;         // NaN: not measured, skipped
  bool marked = false;  // a regression: drawn with a red ring
  std::string tip;      // hover text
  // An error bar from y_low to y_high (the HTML report: busbw's spread over the rounds); none
  // unless both are finite.
  double y_low = std::numeric_limits<double>::quiet_NaN();
  double y_high = std::numeric_limits<double>::quiet_NaN();
};

struct ChartSeries {
  std::string name;
  int colour = 0;                  // 0 baseline A, 1 baseline B
  int dash = 0;                    // 0 solid, 1 dashed, 2 dotted: one per data type
  std::vector<ChartPoint> points;  // in x order
};

struct Panel {
  std::string title;       // "busbw (GB/s)"
  std::string empty_note;  // shown instead of the plot when no series has a point
  YScale y_scale = YScale::kLinear;
  bool y_is_time = false;  // y values are µs: ticks read "10 µs", "1 ms", "1 s"
  std::vector<ChartSeries> series;
};

void draw_panel(const Panel& panel, fmt::memory_buffer& out);

// Axis helpers (exposed for the tests).
// 512 -> "512", 1024 -> "1K", 32768 -> "32K", 2^20 -> "1M", 2^30 -> "1G".
std::string size_label(double bytes);
// 0.5 -> "0.5 µs", 100 -> "100 µs", 1000 -> "1 ms", 1e6 -> "1 s".
std::string time_label(double us);
// Powers of 2 from 2^floor(log2 lo) to 2^ceil(log2 hi), every 1, 2, 5, 10 or 20 exponents so
// that at most 9 remain; multiples of 10 fall on 1K, 1M, 1G.
std::vector<double> log2_ticks(double lo, double hi);
// Powers of 10 from 10^floor(log10 lo) to 10^ceil(log10 hi), every second one beyond 8 decades.
std::vector<double> log10_ticks(double lo, double hi);
// 0, s, 2s, ... up to the first multiple of s ≥ hi, with s = 1, 2 or 5 × 10^k (about 5 steps).
std::vector<double> linear_ticks(double hi);

// ---- Charts against a linear x axis (the memory report) -------------------------------------
// Event index or seconds across, bytes or plain numbers up; stacked areas, lines and hoverable
// points; light vertical rules (step starts) and red ones (OOMs); labelled rings (peaks). Hover
// bands -- one transparent strip per x, the full height of the plot -- carry a <title> each, so
// hovering anywhere over a dense series shows the values there. Colours are CSS classes k0..k9
// that the page styles.

enum class SeriesStyle { kArea, kLine, kDashedLine, kPoints };

struct LinearSeries {
  std::string name;
  int colour = 0;  // CSS class k<colour>
  SeriesStyle style = SeriesStyle::kLine;
  std::vector<double> x;          // ascending; kArea series stack in order and share one x
  std::vector<double> y;
  std::vector<std::string> tips;  // kPoints: one hover text per point
  // kPoints, optional: a short label written beside each point ("8192"), placed where it overlaps
  // no other label or point and stays inside the plot; a label with no such place is left out
  // (its point's tip still says it). Empty: no labels (as before).
  std::vector<std::string> labels = {};  // "= {}": older aggregate initialisers stay complete
};

struct ChartRule {
  double x = 0;
  bool alert = false;  // red (an OOM) instead of light grey (a step start)
};

struct ChartMark {
  double x = 0;
  double y = 0;
  std::string label;  // written next to the ring
  std::string tip;    // hover text of the ring
  bool alert = false;        // red (an OOM)
  bool label_below = false;  // the label under the ring (two marks close together)
};

struct LinearChart {
  std::string title;
  std::string x_title;     // "event index", "time (s)", "step"
  std::string empty_note;  // shown instead of the plot when no series has a point
  bool y_bytes = true;     // y ticks as size_label ("256M"); otherwise plain numbers
  // With y_bytes: ticks name their binary unit as format_bytes (common/units.h) does, every tick
  // of the axis in the one unit of its step, so each label is exact ("500 MiB", "1000 MiB").
  bool y_unit_names = false;
  bool y_from_zero = true;
  double width = 960;
  double height = 320;
  // Pixels kept free inside each edge of the plot, so that markers (and their labels) at the
  // data's extremes lie wholly inside the frame: the axes' domains widen by that much. A y axis
  // from zero is not padded below zero. 0: the extremes on the frame (as before).
  double edge_pad = 0;
  std::vector<LinearSeries> series;  // drawn in order: areas, then lines, then points
  std::vector<ChartRule> rules;
  std::vector<ChartMark> marks;
  std::vector<double> hover_x;  // ascending; one band per x, reaching halfway to its neighbours
  std::vector<std::string> hover_tips;
};

// <svg class="lchart" ...>; the legend is separate (append_linear_legend) so the page can put it
// above the plot.
void draw_linear_chart(const LinearChart& chart, fmt::memory_buffer& out);
// <div class="legend"> with a key per named series, in order.
void append_linear_legend(const LinearChart& chart, fmt::memory_buffer& out);
// <figure class="chart">: the caption, the legend and the chart.
void append_linear_figure(const LinearChart& chart, std::string_view caption,
                          fmt::memory_buffer& out);

// Ticks from the multiple of s at or below lo to the first multiple of s at or above hi, with
// s = 1, 2 or 5 × 10^k × unit (about 5 steps). linear_ticks(hi) is nice_ticks(0, hi, 1).
std::vector<double> nice_ticks(double lo, double hi, double unit);
// nice_ticks with the binary unit (1, 1K, 1M, 1G, 1T) the step falls in, so that labels stay
// round: 0 .. 700 MiB -> 0, 200M, 400M, 600M, 800M; 400 .. 525 MiB -> 400M, 450M, 500M, 550M.
std::vector<double> byte_ticks(double lo, double hi);
// A tick of byte_ticks named in the binary unit of the axis' step (`step`, the distance between
// two ticks), as format_bytes names units: (512 MiB, 256 MiB) -> "512 MiB", (1.5 GiB, 512 MiB)
// -> "1536 MiB", (0, 20 GiB) -> "0 GiB", (3 GiB, 1 GiB) -> "3 GiB", (100, 20) -> "100 B".
std::string byte_tick_label(double bytes, double step);

}  // namespace plumb::report
