#include "report/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <string_view>
#include <tuple>
#include <utility>

#include "report/html_escape.h"
#include "report/html_out.h"

namespace plumb::report {
namespace {

// Panel geometry in SVG user units (the page scales the whole viewBox).
constexpr double kWidth = 480;
constexpr double kHeight = 300;
constexpr double kLeft = 64;
constexpr double kRight = 16;
constexpr double kTop = 30;
constexpr double kBottom = 44;
constexpr double kPointRadius = 3.5;
constexpr double kRingRadius = 7.5;
constexpr double kErrorCap = 3;  // half the width of an error bar's caps
constexpr int kMaxLogTicks = 9;

// Maps a value in [lo, hi] to a pixel in [p0, p1], linearly or on a log scale.
struct Axis {
  double lo = 0;
  double hi = 1;
  bool log = false;
  double p0 = 0;
  double p1 = 1;
  double at(double v) const {
    const double t = log ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
    return p0 + t * (p1 - p0);
  }
};

bool drawable(const ChartPoint& p, bool y_log) {
  return p.x > 0 && std::isfinite(p.x) && std::isfinite(p.y) && (!y_log || p.y > 0);
}

bool has_error_bar(const ChartPoint& p, bool y_log) {
  return std::isfinite(p.y_low) && std::isfinite(p.y_high) && p.y_high > p.y_low &&
         (!y_log || p.y_low > 0);
}

struct Extent {
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = 0;
  double y_lo = std::numeric_limits<double>::infinity();
  double y_hi = 0;
  int points = 0;
};

Extent extent(const Panel& panel) {
  Extent e;
  const bool y_log = panel.y_scale == YScale::kLog;
  for (const ChartSeries& s : panel.series) {
    for (const ChartPoint& p : s.points) {
      if (!drawable(p, y_log)) continue;
      e.x_lo = std::min(e.x_lo, p.x);
      e.x_hi = std::max(e.x_hi, p.x);
      e.y_lo = std::min(e.y_lo, p.y);
      e.y_hi = std::max(e.y_hi, p.y);
      if (has_error_bar(p, y_log)) e.y_hi = std::max(e.y_hi, p.y_high);
      ++e.points;
    }
  }
  return e;
}

// [base^floor(log lo), base^ceil(log hi)], one step wider on each side when that is one value.
std::pair<double, double> log_domain(double lo, double hi, double base) {
  double e_lo = std::floor(std::log(lo) / std::log(base) + 1e-9);
  double e_hi = std::ceil(std::log(hi) / std::log(base) - 1e-9);
  if (e_hi <= e_lo) {
    e_lo -= 1;
    e_hi += 1;
  }
  return {std::pow(base, e_lo), std::pow(base, e_hi)};
}

// Powers of `base` within the domain, every `step` exponents (multiples of `step`).
std::vector<double> power_ticks(double lo, double hi, double base, int step) {
  const auto [d_lo, d_hi] = log_domain(lo, hi, base);
  const int e_lo = static_cast<int>(std::lround(std::log(d_lo) / std::log(base)));
  const int e_hi = static_cast<int>(std::lround(std::log(d_hi) / std::log(base)));
  std::vector<double> ticks;
  for (int e = e_lo; e <= e_hi; ++e) {
    if (e % step == 0) ticks.push_back(std::pow(base, e));
  }
  return ticks;
}

int exponent_span(double lo, double hi, double base) {
  const auto [d_lo, d_hi] = log_domain(lo, hi, base);
  return static_cast<int>(std::lround(std::log(d_hi / d_lo) / std::log(base)));
}

std::string trim_number(double v) { return fmt::format("{:g}", v); }

}  // namespace

std::string size_label(double bytes) {
  static constexpr const char* kSuffix[] = {"", "K", "M", "G", "T", "P"};
  int unit = 0;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return trim_number(bytes) + kSuffix[unit];
}

std::string time_label(double us) {
  if (us < 1000) return trim_number(us) + " µs";
  if (us < 1e6) return trim_number(us / 1e3) + " ms";
  return trim_number(us / 1e6) + " s";
}

std::vector<double> log2_ticks(double lo, double hi) {
  const int span = exponent_span(lo, hi, 2);
  int step = 1;
  for (int s : {1, 2, 5, 10, 20}) {
    step = s;
    if (span / s + 1 <= kMaxLogTicks) break;
  }
  return power_ticks(lo, hi, 2, step);
}

std::vector<double> log10_ticks(double lo, double hi) {
  return power_ticks(lo, hi, 10, exponent_span(lo, hi, 10) + 1 <= kMaxLogTicks ? 1 : 2);
}

std::vector<double> linear_ticks(double hi) {
  if (!(hi > 0)) hi = 1;
  const double raw = hi / 5;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double n = raw / magnitude;
  const double step = (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * magnitude;
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    ticks.push_back(i * step);
    if (i * step >= hi * (1 - 1e-9)) break;
  }
  return ticks;
}

namespace {

struct Frame {
  Axis x;
  Axis y;
  std::vector<double> x_ticks;
  std::vector<double> y_ticks;
};

Frame make_frame(const Panel& panel, const Extent& e) {
  Frame f;
  const auto [x_lo, x_hi] = log_domain(e.x_lo, e.x_hi, 2);
  f.x = {x_lo, x_hi, true, kLeft, kWidth - kRight};
  f.x_ticks = log2_ticks(e.x_lo, e.x_hi);
  if (panel.y_scale == YScale::kLog) {
    const auto [y_lo, y_hi] = log_domain(e.y_lo, e.y_hi, 10);
    f.y = {y_lo, y_hi, true, kHeight - kBottom, kTop};
    f.y_ticks = log10_ticks(e.y_lo, e.y_hi);
  } else {
    f.y_ticks = linear_ticks(e.y_hi);
    f.y = {0, f.y_ticks.back(), false, kHeight - kBottom, kTop};
  }
  return f;
}

void draw_grid(const Panel& panel, const Frame& f, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  for (double t : f.x_ticks) {
    const double px = f.x.at(t);
    fmt::format_to(it,
                   "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
                   "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}"
                   "</text>",
                   px, kTop, kHeight - kBottom, kHeight - kBottom + 16, size_label(t));
  }
  for (double t : f.y_ticks) {
    const double py = f.y.at(t);
    fmt::format_to(it,
                   "<line class=\"grid\" x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\"/>"
                   "<text class=\"tick\" x=\"{3}\" y=\"{0:.1f}\" text-anchor=\"end\" "
                   "dominant-baseline=\"middle\">{4}</text>",
                   py, kLeft, kWidth - kRight, kLeft - 6,
                   panel.y_is_time ? time_label(t) : trim_number(t));
  }
  fmt::format_to(it,
                 "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
                 "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">size (bytes, "
                 "log scale)</text>",
                 kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom,
                 (kLeft + kWidth - kRight) / 2, kHeight - 8);
}

// A vertical bar from y_low to y_high with short caps, under the point (class "err": the page
// styles it).
void draw_error_bar(const ChartPoint& p, double px, const Frame& f, fmt::memory_buffer& out) {
  const double lo = f.y.at(std::max(p.y_low, f.y.lo));
  const double hi = f.y.at(std::min(p.y_high, f.y.hi));
  fmt::format_to(std::back_inserter(out),
                 "<path class=\"err\" d=\"M{0:.1f} {1:.1f}V{2:.1f}M{3:.1f} {1:.1f}H{4:.1f}"
                 "M{3:.1f} {2:.1f}H{4:.1f}\"/>",
                 px, lo, hi, px - kErrorCap, px + kErrorCap);
}

void draw_series(const ChartSeries& s, const Frame& f, bool y_log, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<polyline class=\"line s{} d{}\" points=\"", s.colour, s.dash);
  for (const ChartPoint& p : s.points) {
    if (drawable(p, y_log)) fmt::format_to(it, "{:.1f},{:.1f} ", f.x.at(p.x), f.y.at(p.y));
  }
  fmt::format_to(it, "\"/><g class=\"pts s{}\">", s.colour);
  for (const ChartPoint& p : s.points) {
    if (!drawable(p, y_log)) continue;
    const double px = f.x.at(p.x);
    const double py = f.y.at(p.y);
    if (has_error_bar(p, y_log)) draw_error_bar(p, px, f, out);
    if (p.marked) {
      fmt::format_to(it, "<circle class=\"reg\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"/>", px, py,
                     kRingRadius);
    }
    fmt::format_to(it, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"><title>", px, py,
                   kPointRadius);
    append_escaped(out, p.tip);
    out.append(std::string_view("</title></circle>"));
  }
  out.append(std::string_view("</g>"));
}

}  // namespace

void draw_panel(const Panel& panel, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<svg class=\"panel\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"",
                 kWidth, kHeight);
  append_escaped(out, panel.title);
  fmt::format_to(it, "\"><text class=\"ptitle\" x=\"{}\" y=\"18\">", kLeft);
  append_escaped(out, panel.title);
  out.append(std::string_view("</text>"));
  const Extent e = extent(panel);
  if (e.points == 0) {
    fmt::format_to(it,
                   "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
                   "<text class=\"empty\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">",
                   kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom,
                   (kLeft + kWidth - kRight) / 2, (kTop + kHeight - kBottom) / 2);
    append_escaped(out, panel.empty_note.empty() ? "no data" : panel.empty_note);
    out.append(std::string_view("</text></svg>"));
    return;
  }
  const Frame f = make_frame(panel, e);
  draw_grid(panel, f, out);
  for (const ChartSeries& s : panel.series) draw_series(s, f, panel.y_scale == YScale::kLog, out);
  out.append(std::string_view("</svg>"));
}

}  // namespace plumb::report

// ---- Charts against a linear x axis ------------------------------------------------------------

namespace plumb::report {
namespace {

constexpr double kTicksPerAxis = 5;  // nice_ticks aims at about this many steps
constexpr double kBinaryUnit = 1024;
constexpr double kMarkRadius = 6;

// 1, 2, 5 or 10 times a power of ten, at least `raw`.
double nice_step(double raw) {
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double n = raw / magnitude;
  return (n <= 1 + 1e-9 ? 1 : n <= 2 + 1e-9 ? 2 : n <= 5 + 1e-9 ? 5 : 10) * magnitude;
}

std::vector<double> ticks_with_step(double lo, double hi, double step) {
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9);
  for (double i = first;; ++i) {
    ticks.push_back(i * step + 0.0);  // + 0.0: no "-0"
    if (i * step >= hi - step * 1e-9) break;
  }
  return ticks;
}

// A flat or empty range gets some height, so that its ticks are distinct.
std::pair<double, double> widened(double lo, double hi) {
  if (!(hi > lo)) {
    const double pad = std::max(std::abs(hi) * 0.1, 1.0);
    return {lo > 0 ? std::max(0.0, lo - pad) : lo, hi + pad};
  }
  return {lo, hi};
}

// "1200", "0.5": whole numbers without an exponent (event indices run into the millions).
std::string plain_label(double v) {
  if (std::abs(v - std::round(v)) < 1e-9 && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, double unit) {
  std::tie(lo, hi) = widened(lo, hi);
  return ticks_with_step(lo, hi, nice_step((hi - lo) / kTicksPerAxis / unit) * unit);
}

std::vector<double> byte_ticks(double lo, double hi) {
  std::tie(lo, hi) = widened(lo, hi);
  const double raw = (hi - lo) / kTicksPerAxis;
  double unit = 1;
  while (unit * kBinaryUnit <= raw) unit *= kBinaryUnit;
  double step = nice_step(raw / unit);
  if (step >= 1000) step = kBinaryUnit;  // 1000K reads better as 1M
  return ticks_with_step(lo, hi, std::max(1.0, step * unit));
}

std::string byte_tick_label(double bytes, double step) {
  static constexpr const char* kUnit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t unit = 0;
  double scale = 1;
  while (unit + 1 < std::size(kUnit) && step >= scale * kBinaryUnit) {
    scale *= kBinaryUnit;
    ++unit;
  }
  return fmt::format("{:g} {}", bytes / scale, kUnit[unit]);
}

namespace {

struct LinearFrame {
  Axis x;
  Axis y;
  std::vector<double> x_ticks;
  std::vector<double> y_ticks;
  double right = 0;   // the plot's right edge
  double bottom = 0;  // the plot's bottom edge
};

// The extent of every series (areas stacked), rules and marks.
struct LinearExtent {
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = -std::numeric_limits<double>::infinity();
  double y_lo = std::numeric_limits<double>::infinity();
  double y_hi = -std::numeric_limits<double>::infinity();
  size_t points = 0;
  void add(double x, double y) {
    if (!std::isfinite(x) || !std::isfinite(y)) return;
    x_lo = std::min(x_lo, x);
    x_hi = std::max(x_hi, x);
    y_lo = std::min(y_lo, y);
    y_hi = std::max(y_hi, y);
    ++points;
  }
};

// Per area series, the top of its band: the running sum of the areas up to and including it.
std::vector<std::vector<double>> stacked_tops(const LinearChart& c) {
  std::vector<std::vector<double>> tops;
  const std::vector<double>* below = nullptr;
  for (const LinearSeries& s : c.series) {
    if (s.style != SeriesStyle::kArea) continue;
    std::vector<double> top(s.y);
    if (below != nullptr) {
      for (size_t i = 0; i < top.size() && i < below->size(); ++i) top[i] += (*below)[i];
    }
    tops.push_back(std::move(top));
    below = &tops.back();
  }
  return tops;
}

LinearExtent linear_extent(const LinearChart& c, const std::vector<std::vector<double>>& tops) {
  LinearExtent e;
  size_t area = 0;
  for (const LinearSeries& s : c.series) {
    const std::vector<double>& y = s.style == SeriesStyle::kArea ? tops[area++] : s.y;
    for (size_t i = 0; i < s.x.size() && i < y.size(); ++i) e.add(s.x[i], y[i]);
  }
  for (const ChartMark& m : c.marks) e.add(m.x, m.y);
  return e;
}

// The share of a domain that `pad` pixels are on each side of a plot `pixels` long, once the
// domain is widened by that share at both ends.
double pad_share(double pad, double pixels) {
  return pad > 0 && pixels > 2 * pad ? pad / (pixels - 2 * pad) : 0;
}

LinearFrame make_linear_frame(const LinearChart& c, const LinearExtent& e) {
  LinearFrame f;
  f.right = c.width - kRight;
  f.bottom = c.height - kBottom;
  auto [x_lo, x_hi] = widened(e.x_lo, e.x_hi);
  const double x_pad = pad_share(c.edge_pad, f.right - kLeft) * (x_hi - x_lo);
  x_lo -= x_pad;
  x_hi += x_pad;
  f.x = {x_lo, x_hi, false, kLeft, f.right};
  for (double t : nice_ticks(x_lo, x_hi, 1)) {
    const double slack = 1e-9 * (x_hi - x_lo);
    if (t >= x_lo - slack && t <= x_hi + slack) f.x_ticks.push_back(t);
  }
  double y_lo = c.y_from_zero ? std::min(0.0, e.y_lo) : e.y_lo;
  double y_hi = e.y_hi;
  const double y_pad = pad_share(c.edge_pad, f.bottom - kTop) * (y_hi - y_lo);
  if (!(c.y_from_zero && y_lo == 0)) y_lo -= y_pad;
  y_hi += y_pad;
  f.y_ticks = c.y_bytes ? byte_ticks(y_lo, y_hi) : nice_ticks(y_lo, y_hi, 1);
  f.y = {f.y_ticks.front(), f.y_ticks.back(), false, f.bottom, kTop};
  return f;
}

void draw_linear_grid(const LinearChart& c, const LinearFrame& f, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  for (double t : f.x_ticks) {
    fmt::format_to(it,
                   "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
                   "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
                   f.x.at(t), kTop, f.bottom, f.bottom + 16, plain_label(t));
  }
  const double y_step = f.y_ticks.size() > 1 ? f.y_ticks[1] - f.y_ticks[0] : f.y_ticks.front();
  for (double t : f.y_ticks) {
    fmt::format_to(it,
                   "<line class=\"grid\" x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\"/>"
                   "<text class=\"tick\" x=\"{3}\" y=\"{0:.1f}\" text-anchor=\"end\" "
                   "dominant-baseline=\"middle\">{4}</text>",
                   f.y.at(t), kLeft, f.right, kLeft - 6,
                   !c.y_bytes         ? plain_label(t)
                   : c.y_unit_names ? byte_tick_label(t, y_step)
                                    : size_label(t));
  }
  fmt::format_to(it,
                 "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
                 "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">",
                 kLeft, kTop, f.right - kLeft, f.bottom - kTop, (kLeft + f.right) / 2,
                 c.height - 8);
  append_escaped(out, c.x_title);
  out.append(std::string_view("</text>"));
}

// One band: up along this series' tops, back down along the tops below (or the axis).
void draw_area(const LinearSeries& s, const std::vector<double>& top,
               const std::vector<double>* below, const LinearFrame& f, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<polygon class=\"area k{}\" points=\"", s.colour);
  const size_t n = std::min(s.x.size(), top.size());
  for (size_t i = 0; i < n; ++i) {
    fmt::format_to(it, "{:.1f},{:.1f} ", f.x.at(s.x[i]), f.y.at(top[i]));
  }
  for (size_t i = n; i-- > 0;) {
    const double base = below != nullptr && i < below->size() ? (*below)[i] : f.y.lo;
    fmt::format_to(it, "{:.1f},{:.1f} ", f.x.at(s.x[i]), f.y.at(base));
  }
  out.append(std::string_view("\"/>"));
}

void draw_line(const LinearSeries& s, const LinearFrame& f, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<polyline class=\"line k{}{}\" points=\"", s.colour,
                 s.style == SeriesStyle::kDashedLine ? " d1" : "");
  for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
    if (std::isfinite(s.y[i])) fmt::format_to(it, "{:.1f},{:.1f} ", f.x.at(s.x[i]), f.y.at(s.y[i]));
  }
  out.append(std::string_view("\"/>"));
}

void draw_points(const LinearSeries& s, const LinearFrame& f, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<g class=\"pts k{}\">", s.colour);
  for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
    if (!std::isfinite(s.y[i])) continue;
    fmt::format_to(it, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"><title>", f.x.at(s.x[i]),
                   f.y.at(s.y[i]), kPointRadius);
    if (i < s.tips.size()) append_escaped(out, s.tips[i]);
    out.append(std::string_view("</title></circle>"));
  }
  out.append(std::string_view("</g>"));
}

// Point labels: beside the point (above, below, right, left, then the diagonals below), the
// first place whose box stays inside the plot and overlaps no placed label and no other point.
constexpr double kLabelCharWidth = 6.2;  // an 11 px sans-serif digit or letter, about
constexpr double kLabelHeight = 11;
constexpr double kLabelGap = 3;

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

struct PlacedLabel {
  double x, y;  // the text's anchor, on its baseline
  const char* anchor;
  const std::string* text;
};

std::vector<Box> point_boxes(const LinearChart& c, const LinearFrame& f) {
  std::vector<Box> boxes;
  for (const LinearSeries& s : c.series) {
    if (s.style != SeriesStyle::kPoints) continue;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      const double px = f.x.at(s.x[i]), py = f.y.at(s.y[i]);
      boxes.push_back({px - kPointRadius, py - kPointRadius, px + kPointRadius, py + kPointRadius});
    }
  }
  return boxes;
}

std::vector<PlacedLabel> place_point_labels(const LinearChart& c, const LinearFrame& f) {
  const std::vector<Box> points = point_boxes(c, f);
  const Box plot{kLeft, kTop, f.right, f.bottom};
  std::vector<Box> taken;
  std::vector<PlacedLabel> placed;
  for (const LinearSeries& s : c.series) {
    if (s.style != SeriesStyle::kPoints) continue;
    for (size_t i = 0; i < s.x.size() && i < s.y.size() && i < s.labels.size(); ++i) {
      if (!std::isfinite(s.y[i]) || s.labels[i].empty()) continue;
      const double px = f.x.at(s.x[i]), py = f.y.at(s.y[i]);
      const double w = kLabelCharWidth * static_cast<double>(s.labels[i].size());
      const double r = kPointRadius + kLabelGap, h = kLabelHeight;
      // Each candidate: the box's left and top edges, and the anchor the text is written with.
      const std::array<std::tuple<double, double, const char*>, 6> candidates = {{
          {px - w / 2, py - r - h, "middle"}, {px - w / 2, py + r, "middle"},
          {px + r, py - h / 2, "start"}, {px - r - w, py - h / 2, "end"},
          {px + r, py + r - 2, "start"}, {px - r - w, py + r - 2, "end"}}};
      for (const auto& [x0, y0, anchor] : candidates) {
        const Box b{x0, y0, x0 + w, y0 + h};
        const auto hits = [&b](const Box& o) { return b.overlaps(o); };
        if (b.x0 < plot.x0 || b.x1 > plot.x1 || b.y0 < plot.y0 || b.y1 > plot.y1) continue;
        if (std::any_of(taken.begin(), taken.end(), hits) ||
            std::any_of(points.begin(), points.end(), hits)) {
          continue;
        }
        taken.push_back(b);
        const double tx = std::string_view(anchor) == "start" ? b.x0
                          : std::string_view(anchor) == "end" ? b.x1 : (b.x0 + b.x1) / 2;
        placed.push_back({tx, b.y1 - 2, anchor, &s.labels[i]});
        break;
      }
    }
  }
  return placed;
}

void draw_point_labels(const LinearChart& c, const LinearFrame& f, fmt::memory_buffer& out) {
  const std::vector<PlacedLabel> labels = place_point_labels(c, f);
  if (labels.empty()) return;
  auto it = std::back_inserter(out);
  out.append(std::string_view("<g class=\"plabels\">"));
  for (const PlacedLabel& l : labels) {
    fmt::format_to(it, "<text class=\"plabel\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">",
                   l.x, l.y, l.anchor);
    append_escaped(out, *l.text);
    out.append(std::string_view("</text>"));
  }
  out.append(std::string_view("</g>"));
}

void draw_hover_bands(const LinearChart& c, const LinearFrame& f, fmt::memory_buffer& out) {
  const size_t n = std::min(c.hover_x.size(), c.hover_tips.size());
  if (n == 0) return;
  auto it = std::back_inserter(out);
  out.append(std::string_view("<g class=\"hover\">"));
  for (size_t i = 0; i < n; ++i) {
    const double left = i == 0 ? kLeft : (f.x.at(c.hover_x[i - 1]) + f.x.at(c.hover_x[i])) / 2;
    const double right =
        i + 1 == n ? f.right : (f.x.at(c.hover_x[i]) + f.x.at(c.hover_x[i + 1])) / 2;
    fmt::format_to(it, "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\"><title>", left,
                   kTop, std::max(0.0, right - left), f.bottom - kTop);
    append_escaped(out, c.hover_tips[i]);
    out.append(std::string_view("</title></rect>"));
  }
  out.append(std::string_view("</g>"));
}

void draw_rules(const LinearChart& c, const LinearFrame& f, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  for (const ChartRule& r : c.rules) {
    if (!std::isfinite(r.x)) continue;
    fmt::format_to(it, "<line class=\"rule{}\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>",
                   r.alert ? " alert" : "", f.x.at(r.x), kTop, f.x.at(r.x), f.bottom);
  }
}

// Labels left of the ring in the right half of the plot, right of it in the left half.
void draw_marks(const LinearChart& c, const LinearFrame& f, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  for (const ChartMark& m : c.marks) {
    if (!std::isfinite(m.x) || !std::isfinite(m.y)) continue;
    const double px = f.x.at(m.x);
    const double py = f.y.at(m.y);
    const bool right_half = px > (kLeft + f.right) / 2;
    fmt::format_to(it, "<g class=\"mark{}\"><circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"><title>",
                   m.alert ? " alert" : "", px, py, kMarkRadius);
    append_escaped(out, m.tip);
    fmt::format_to(it, "</title></circle><text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">",
                   right_half ? px - kMarkRadius - 3 : px + kMarkRadius + 3,
                   m.label_below ? std::min(f.bottom - 4, py + 16) : std::max(kTop + 10, py - 4),
                   right_half ? "end" : "start");
    append_escaped(out, m.label);
    out.append(std::string_view("</text></g>"));
  }
}

}  // namespace

void draw_linear_chart(const LinearChart& c, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<svg class=\"lchart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"",
                 c.width, c.height);
  append_escaped(out, c.title);
  fmt::format_to(it, "\"><text class=\"ptitle\" x=\"{}\" y=\"18\">", kLeft);
  append_escaped(out, c.title);
  out.append(std::string_view("</text>"));
  const std::vector<std::vector<double>> tops = stacked_tops(c);
  const LinearExtent e = linear_extent(c, tops);
  if (e.points == 0) {
    fmt::format_to(it,
                   "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
                   "<text class=\"empty\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">",
                   kLeft, kTop, c.width - kLeft - kRight, c.height - kTop - kBottom,
                   (kLeft + c.width - kRight) / 2, (kTop + c.height - kBottom) / 2);
    append_escaped(out, c.empty_note.empty() ? "no data" : c.empty_note);
    out.append(std::string_view("</text></svg>"));
    return;
  }
  const LinearFrame f = make_linear_frame(c, e);
  draw_linear_grid(c, f, out);
  size_t area = 0;
  for (const LinearSeries& s : c.series) {
    if (s.style != SeriesStyle::kArea) continue;
    draw_area(s, tops[area], area > 0 ? &tops[area - 1] : nullptr, f, out);
    ++area;
  }
  draw_rules(c, f, out);
  for (const LinearSeries& s : c.series) {
    if (s.style == SeriesStyle::kLine || s.style == SeriesStyle::kDashedLine) draw_line(s, f, out);
  }
  draw_hover_bands(c, f, out);
  for (const LinearSeries& s : c.series) {
    if (s.style == SeriesStyle::kPoints) draw_points(s, f, out);
  }
  draw_point_labels(c, f, out);
  draw_marks(c, f, out);
  out.append(std::string_view("</svg>"));
}

void append_linear_legend(const LinearChart& c, fmt::memory_buffer& out) {
  auto it = std::back_inserter(out);
  out.append(std::string_view("<div class=\"legend\">"));
  for (const LinearSeries& s : c.series) {
    if (s.name.empty()) continue;
    out.append(std::string_view("<span><svg class=\"key\" viewBox=\"0 0 28 10\">"));
    switch (s.style) {
      case SeriesStyle::kArea:
        fmt::format_to(it, "<rect class=\"area k{}\" x=\"1\" y=\"1\" width=\"26\" height=\"8\"/>",
                       s.colour);
        break;
      case SeriesStyle::kPoints:
        fmt::format_to(it, "<g class=\"pts k{}\"><circle cx=\"14\" cy=\"5\" r=\"3.5\"/></g>",
                       s.colour);
        break;
      default:
        fmt::format_to(it, "<line class=\"line k{}{}\" x1=\"1\" y1=\"5\" x2=\"27\" y2=\"5\"/>",
                       s.colour, s.style == SeriesStyle::kDashedLine ? " d1" : "");
    }
    out.append(std::string_view("</svg>"));
    append_escaped(out, s.name);
    out.append(std::string_view("</span>"));
  }
  out.append(std::string_view("</div>"));
}

void append_linear_figure(const LinearChart& chart, std::string_view caption,
                          fmt::memory_buffer& out) {
  put(out, "<figure class=\"chart\"><figcaption>");
  put(out, caption);
  put(out, "</figcaption>");
  append_linear_legend(chart, out);
  draw_linear_chart(chart, out);
  put(out, "</figure>");
}

}  // namespace plumb::report
