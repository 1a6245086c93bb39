#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "report/html_escape.h"

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
