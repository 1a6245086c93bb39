// `plumb precision compare --html`: one self-contained page like the other reports (kPageStyle,
// inline SVG drawn here, no script, nothing by URL). See precision_reporter.h for its sections
// and docs/precision.md for how to read it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/html_out.h"
#include "report/html_style.h"
#include "report/precision_reporter.h"
#include "report/svg_chart.h"

namespace plumb::report {
namespace {

using precision::PairResult;
using precision::Verdict;

// After kPageStyle. Pass blue, fail red, unmatched grey: the same in the bars, marks and table.
// Operator names are monospace as in the table, so that their width is known (0.6 em a glyph).
constexpr std::string_view kPrecisionStyle = R"(
ul.facts{margin:4px 0 8px;padding-left:20px}
svg.bars{width:100%;max-width:1300px;height:auto;display:block}
.bar.pass rect{fill:#1f6fb4}.bar.fail rect{fill:#d62728}.bar:hover rect{fill:#000}
.mark-fail{fill:#d62728}.mark-unmatched{fill:#999}.undefined{stroke:#d62728;stroke-dasharray:2 2}
.threshold{stroke:#e8710a;stroke-width:1.2;stroke-dasharray:6 3}
.tlabel{font-size:11px;fill:#b35300}.tlabel .tsource{fill:#777}
.xname{font:10px monospace;fill:#444}.xname.first{fill:#a40000;font-weight:700}
.xtick{stroke:#999}.first-fail{fill:#fde3e3}.first-fail-label{font-size:11px;font-weight:600;fill:#a40000}
ul.thresholds{margin:6px 0 0;padding-left:20px;font-size:13px}ul.thresholds li{margin:2px 0}
p.rule-note{margin:6px 0 0;font-size:13px}
tr.fail td{color:#a40000}tr.unmatched td{color:#777}td.name{font-family:monospace}
td.num{white-space:nowrap}td.why:not(:empty){min-width:20em}
)";

constexpr double kBarChartWidth = 1100;
constexpr double kBarChartLeft = 72;    // y tick labels
constexpr double kBarChartRight = 170;  // the threshold lines' labels, and the last names' slant
constexpr double kBarChartTop = 32;     // the fail marks, and above them the first failure's label
constexpr double kPlotHeight = 220;
constexpr double kMarkSize = 4;
constexpr double kMinBarWidth = 0.4;   // thinner bars are still drawn this wide
constexpr double kGapFrom = 3;         // bars wider than this get a gap
constexpr double kGapShare = 0.2;
constexpr double kLinearTicks = 4;
constexpr double kCosinePad = 0.01;    // below the lowest cosine
constexpr double kLogSpan = 1e12;      // the log axis covers at most 12 decades
// Operator names under the x axis, slanted 45° down to the right.
constexpr size_t kMaxNameChars = 40;   // longer names keep their head and tail: "Functional.layer_…"
constexpr size_t kMinNameHead = 11;    // a tail cut at a '.' leaves the head at least this
constexpr double kNameGlyph = 6;       // 10 px monospace: 0.6 em a glyph
constexpr double kNameSpacing = 16;    // slanted names closer than this overlap: every k-th
constexpr double kSin45 = 0.7071;
constexpr double kTickLength = 4;
constexpr double kThresholdLabelLines = 24;  // two 11 px lines, and a gap

std::string_view verdict_class(Verdict v) { return precision::verdict_name(v); }

// A rule's threshold drawn as a dashed line: "cosine 0.99" / "msprobe, --cosine" beside it, and
// what crossing it means under the chart, in the console's and docs/precision.md's words.
struct Threshold {
  double value = 0;
  std::string label;    // the metric and the value
  std::string source;   // the rule and the flag that set it
  std::string meaning;  // "a pair below it fails when ..."
};

// One chart: a value per pair in execution order (NaN: not computed or undefined).
struct BarChart {
  std::string id;
  std::string caption;
  std::string y_title;
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<Threshold> thresholds;
  std::string rule_note;  // why no line is drawn (assert-close judges elements)
  std::string also_fails;  // what fails a pair besides the lines
  std::vector<double> values;

  double plot_width() const { return kBarChartWidth - kBarChartLeft - kBarChartRight; }
  double y(double v) const {
    double share = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                       : (v - lo) / (hi - lo);
    share = std::clamp(std::isnan(share) ? 0.0 : share, 0.0, 1.0);
    return kBarChartTop + kPlotHeight * (1 - share);
  }
};

// Which pairs the x axis names: every k-th (k keeps slanted names apart) and the first failure,
// whose neighbours closer than kNameSpacing give way to it.
struct XNames {
  size_t every = 1;
  std::optional<size_t> first_fail;
  std::vector<size_t> named;
  size_t shared = 0;  // the head every name shares, left out of long ones (shared_head)
  double height = 0;  // below the plot: tick, slanted names
};

std::vector<const PairResult*> in_execution_order(const precision::CompareResult& r) {
  std::vector<const PairResult*> pairs;
  for (const PairResult& p : r.pairs) pairs.push_back(&p);
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const PairResult* a, const PairResult* b) { return a->order < b->order; });
  if (pairs.size() > kMaxPrecisionBars) pairs.resize(kMaxPrecisionBars);
  return pairs;
}

std::optional<size_t> first_failure(const std::vector<const PairResult*>& pairs) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i]->judgement.verdict == Verdict::kFail) return i;
  }
  return std::nullopt;
}

// A cut that does not split a UTF-8 sequence: back to the start of the character at `at`.
size_t char_start(std::string_view s, size_t at) {
  while (at > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}

// The segments every name on the chart starts with, but the last of them: "model.layers.12" and
// "model.layers.7" share "model.", which a long name can leave out ("…layers.12.mlp...").
size_t shared_head(const std::vector<const PairResult*>& pairs) {
  if (pairs.size() < 2) return 0;  // one name shares nothing with another
  std::string_view common = pairs.front()->name;
  for (const PairResult* p : pairs) {
    size_t n = 0;
    while (n < common.size() && n < p->name.size() && common[n] == p->name[n]) ++n;
    common = common.substr(0, n);
  }
  const size_t last = common.rfind('.');
  if (last == std::string_view::npos || last == 0) return 0;
  const size_t before = common.rfind('.', last - 1);
  return before == std::string_view::npos ? 0 : before + 1;
}

// A name as the axis writes it: whole up to kMaxNameChars; longer, without the head every name
// shares ("…"), then if still too long its head (not cut inside a number), "…" and its tail from
// a '.' (the part that says input, output or parameter), or its last characters.
std::string short_name(std::string_view name, size_t shared) {
  if (name.size() <= kMaxNameChars) return std::string(name);
  std::string out = shared > 0 ? "…" : "";
  name.remove_prefix(std::min(shared, name.size()));
  const size_t room = kMaxNameChars - (shared > 0 ? 1 : 0);
  if (name.size() <= room) return out.append(name);
  const size_t tail_room = room - 1 - kMinNameHead;
  size_t tail = name.size() - tail_room;
  const size_t dot = name.find('.', tail);
  tail = dot == std::string_view::npos || dot + 1 >= name.size() ? char_start(name, tail) : dot + 1;
  size_t head = char_start(name, room - 1 - (name.size() - tail));
  const auto digit = [&name](size_t i) { return name[i] >= '0' && name[i] <= '9'; };
  while (head > 0 && digit(head - 1) && digit(head)) --head;  // "layers.2…" would lie about 237
  return fmt::format("{}{}…{}", out, name.substr(0, head), name.substr(tail));
}

XNames x_names(const std::vector<const PairResult*>& pairs, double step) {
  XNames x;
  x.every = static_cast<size_t>(std::max(1.0, std::ceil(kNameSpacing / step)));
  x.first_fail = first_failure(pairs);
  x.shared = shared_head(pairs);
  const size_t clear = x.every;  // neighbours of the first failure closer than this give way
  size_t longest = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const bool first = x.first_fail == i;
    const bool near_first = x.first_fail && i != *x.first_fail &&
                            (i > *x.first_fail ? i - *x.first_fail : *x.first_fail - i) < clear;
    if (!first && (i % x.every != 0 || near_first)) continue;
    x.named.push_back(i);
    longest = std::max(longest, std::min(pairs[i]->name.size(), kMaxNameChars));
  }
  x.height = kTickLength + 8 + static_cast<double>(longest) * kNameGlyph * kSin45 + 24;
  return x;
}

std::string tip(const PairResult& p) {
  std::string t = fmt::format("#{} {} — {}", p.order, p.name, precision::verdict_name(p.judgement.verdict));
  if (p.metrics) {
    t += fmt::format("\ncosine {}\nmax abs err {}\nmax rel err {}", cosine_text(p.metrics->cosine),
                     error_text(p.metrics->max_abs_err), error_text(p.metrics->max_rel_err));
  }
  if (p.stat_diffs) t += fmt::format("\nL2 norm rel diff {}", ratio_text(p.stat_diffs->norm_rel));
  if (!p.judgement.why.empty()) t += "\n" + p.judgement.why;
  return t;
}

// assert-close has no per-operator threshold: it says so, with the tolerances it used per dtype.
std::string assert_close_note(const std::vector<const PairResult*>& pairs) {
  std::vector<std::string> seen;
  for (const PairResult* p : pairs) {
    if (!p->metrics) continue;
    std::string t = fmt::format("{} rtol {:g}, atol {:g}", pair_dtype(*p), p->metrics->rtol,
                                p->metrics->atol);
    if (std::find(seen.begin(), seen.end(), t) == seen.end()) seen.push_back(std::move(t));
  }
  return fmt::format(
      "No threshold line: rule assert-close judges each element, not these per-operator figures. "
      "A pair fails when any element has |a - b| > atol + rtol * |b| ({}).",
      seen.empty() ? "torch's tolerances for the dtype" : fmt::format("{}", fmt::join(seen, "; ")));
}

constexpr std::string_view kMsprobeAlsoFails =
    "A bar's colour is its verdict: under msprobe a pair also fails when its metrics are "
    "undefined (NaN or Inf at different places), A holds NaN or Inf, or one side is all zero "
    "(the table's why).";

// msprobe's four thresholds: two on each chart, in the words of its verdicts ("cosine 0.98 < 0.99
// and max abs error 0.02 > 0.001").
std::vector<Threshold> cosine_thresholds(const precision::Thresholds& t) {
  return {{t.cosine_pass, fmt::format("cosine {:g}", t.cosine_pass), "msprobe, --cosine",
           fmt::format("a pair below it fails when its max abs error is also above {:g} (cosine "
                       "< {:g} and max abs error > {:g})",
                       t.abs_with_cosine, t.cosine_pass, t.abs_with_cosine)},
          {t.cosine_fail, fmt::format("cosine {:g}", t.cosine_fail), "msprobe, --cosine-fail",
           fmt::format("a pair below it fails whatever its error (cosine < {:g})", t.cosine_fail)}};
}

std::vector<Threshold> max_abs_thresholds(const precision::Thresholds& t) {
  return {{t.abs_with_cosine, fmt::format("max abs error {:g}", t.abs_with_cosine),
           "msprobe, --max-abs",
           fmt::format("a pair above it fails when its cosine is also below {:g} (cosine < {:g} "
                       "and max abs error > {:g})",
                       t.cosine_pass, t.cosine_pass, t.abs_with_cosine)},
          {t.max_abs_fail, fmt::format("max abs error {:g}", t.max_abs_fail),
           "msprobe, --max-abs-fail",
           fmt::format("a pair above it fails whatever its cosine (max abs error > {:g})",
                       t.max_abs_fail)}};
}

// A linear axis from below the lowest cosine (and the fail threshold) to 1.
BarChart cosine_chart(const std::vector<const PairResult*>& pairs, bool msprobe,
                      const precision::Thresholds& t) {
  BarChart c;
  c.id = "cosine";
  c.caption = "Cosine similarity per operator, in execution order";
  c.y_title = "cosine";
  double lowest = msprobe ? t.cosine_fail : 1;
  for (const PairResult* p : pairs) {
    const double v = p->metrics ? p->metrics->cosine : precision::kUndefined;
    c.values.push_back(v);
    if (std::isfinite(v)) lowest = std::min(lowest, v);
  }
  c.lo = std::max(-1.0, std::floor((lowest - kCosinePad) * 100) / 100);
  c.hi = 1;
  if (msprobe) {
    c.thresholds = cosine_thresholds(t);
    c.also_fails = kMsprobeAlsoFails;
  } else {
    c.rule_note = assert_close_note(pairs);
  }
  return c;
}

// A log axis over the decades the positive values (and the thresholds) span.
BarChart log_chart(std::string id, std::string caption, std::string y_title,
                   std::vector<double> values, std::vector<Threshold> thresholds) {
  BarChart c;
  c.id = std::move(id);
  c.caption = std::move(caption);
  c.y_title = std::move(y_title);
  c.log = true;
  double lo = HUGE_VAL, hi = 0;
  for (double v : values) {
    if (std::isfinite(v) && v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  for (const Threshold& m : thresholds) {
    if (m.value > 0) lo = std::min(lo, m.value), hi = std::max(hi, m.value);
  }
  if (hi == 0) lo = 1e-6, hi = 1;
  c.hi = std::pow(10, std::ceil(std::log10(hi)));
  c.lo = std::max(std::pow(10, std::floor(std::log10(lo))), c.hi / kLogSpan);
  if (c.lo >= c.hi) c.lo = c.hi / 10;
  c.values = std::move(values);
  c.thresholds = std::move(thresholds);
  return c;
}

BarChart max_abs_chart(const std::vector<const PairResult*>& pairs, bool msprobe,
                       const precision::Thresholds& t) {
  std::vector<double> values;
  for (const PairResult* p : pairs) {
    values.push_back(p->metrics ? p->metrics->max_abs_err : precision::kUndefined);
  }
  BarChart c = log_chart("max-abs",
                         "Max absolute error per operator, in execution order (log scale; an "
                         "error of 0 is a flat bar on the axis)",
                         "max abs err", std::move(values),
                         msprobe ? max_abs_thresholds(t) : std::vector<Threshold>{});
  if (!msprobe) c.rule_note = assert_close_note(pairs);
  if (msprobe) c.also_fails = kMsprobeAlsoFails;
  return c;
}

BarChart stat_rel_chart(const std::vector<const PairResult*>& pairs, const precision::Thresholds& t) {
  std::vector<double> values;
  for (const PairResult* p : pairs) {
    values.push_back(p->stat_diffs ? p->stat_diffs->norm_rel : precision::kUndefined);
  }
  BarChart c = log_chart(
      "norm-rel",
      "Relative difference of the L2 norm per operator, in execution order (log scale; a "
      "difference of 0 is a flat bar on the axis)",
      "L2 norm rel diff", std::move(values),
      {{t.stats_rel_fail, fmt::format("L2 norm rel. error {:g}", t.stats_rel_fail),
        "statistics, --stats-rel",
        fmt::format("a pair above it fails (L2 norm relative error > {:g})", t.stats_rel_fail)}});
  c.also_fails =
      "A bar's colour is its verdict: a pair also fails when a statistic is NaN or Inf on one "
      "side only, or A's max or min is NaN or Inf (the table's why).";
  return c;
}

void append_y_axis(const BarChart& c, fmt::memory_buffer& out) {
  std::vector<double> ticks;
  if (c.log) {
    ticks = log10_ticks(c.lo, c.hi);
  } else {
    // A step of 1, 2 or 5 × 10^k giving about kLinearTicks intervals, from the first multiple.
    const double raw = (c.hi - c.lo) / kLinearTicks;
    const double decade = std::pow(10, std::floor(std::log10(raw)));
    double step = decade;
    for (double m : {2.0, 5.0, 10.0}) {
      if (step < raw) step = m * decade;
    }
    for (double v = std::ceil(c.lo / step - 1e-9) * step; v <= c.hi * (1 + 1e-12); v += step) {
      ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    }
  }
  for (double v : ticks) {
    if (v < c.lo * (1 - 1e-9) || v > c.hi * (1 + 1e-9)) continue;
    putf(out,
         "<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
         "<text class=\"tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.4g}</text>",
         kBarChartLeft, c.y(v), kBarChartWidth - kBarChartRight, kBarChartLeft - 4, c.y(v) + 4, v);
  }
  putf(out,
       "<text class=\"axis\" transform=\"translate(14 {:.1f}) rotate(-90)\" "
       "text-anchor=\"middle\">",
       kBarChartTop + kPlotHeight / 2);
  put_escaped(out, c.y_title);
  put(out, "</text>");
}

// Each named pair: a tick and its name slanted down to the right, the whole name on hover.
void append_x_axis(const BarChart& c, const std::vector<const PairResult*>& pairs,
                   const XNames& x, fmt::memory_buffer& out) {
  const double bottom = kBarChartTop + kPlotHeight;
  const double step = c.plot_width() / static_cast<double>(std::max<size_t>(pairs.size(), 1));
  for (size_t i : x.named) {
    const double mid = kBarChartLeft + (static_cast<double>(i) + 0.5) * step;
    const double y = bottom + kTickLength + 6;
    putf(out,
         "<line class=\"xtick\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
         "<text class=\"xname{3}\" x=\"{0:.1f}\" y=\"{4:.1f}\" transform=\"rotate(45 {0:.1f} "
         "{4:.1f})\"><title>",
         mid, bottom, bottom + kTickLength, x.first_fail == i ? " first" : "", y);
    put_escaped(out, pairs[i]->name);
    put(out, "</title>");
    put_escaped(out, short_name(pairs[i]->name, x.shared));
    put(out, "</text>");
  }
  putf(out,
       "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
       "<text class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">operator, in "
       "execution order{}</text>",
       kBarChartLeft, kBarChartTop, c.plot_width(), kPlotHeight, kBarChartLeft + c.plot_width() / 2,
       bottom + x.height - 6,
       x.every > 1 ? fmt::format(" (one in {} named; hover a bar for its name)", x.every) : "");
}

// The lines across the plot, each labelled in the right margin: the metric and value, then the
// rule and flag; labels closer than two lines are pushed apart.
void append_thresholds(const BarChart& c, fmt::memory_buffer& out) {
  std::vector<std::pair<double, const Threshold*>> shown;
  for (const Threshold& t : c.thresholds) {
    if (t.value >= c.lo && t.value <= c.hi) shown.push_back({c.y(t.value), &t});
  }
  std::sort(shown.begin(), shown.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const double right = kBarChartWidth - kBarChartRight;
  std::vector<double> label_y;  // each label's first baseline: at its line, below the one above
  for (const auto& [y, t] : shown) {
    label_y.push_back(label_y.empty() ? y + 4 : std::max(y + 4, label_y.back() + kThresholdLabelLines));
  }
  // Not below the plot, where the last names slant into the margin: all move up together.
  const double excess = label_y.empty() ? 0 : label_y.back() + 12 - (kBarChartTop + kPlotHeight);
  for (double& l : label_y) l -= std::max(0.0, excess);
  for (size_t k = 0; k < shown.size(); ++k) {
    const auto& [y, t] = shown[k];
    putf(out,
         "<line class=\"threshold\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
         "<text class=\"tlabel\" x=\"{3}\" y=\"{4:.1f}\">{5}<tspan class=\"tsource\" x=\"{3}\" "
         "dy=\"12\">{6}</tspan></text>",
         kBarChartLeft, y, right + 4, right + 8, label_y[k], t->label, t->source);
  }
}

// The first failure's column: a pale band behind the bars and its label above the fail marks.
void append_first_failure(const XNames& x, double step, fmt::memory_buffer& out) {
  if (!x.first_fail) return;
  const double left = kBarChartLeft + static_cast<double>(*x.first_fail) * step;
  const double mid = left + step / 2;
  const bool right_half =
      mid > kBarChartLeft + (kBarChartWidth - kBarChartLeft - kBarChartRight) / 2;
  putf(out,
       "<rect class=\"first-fail\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\"/>"
       "<text class=\"first-fail-label\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\">first failure"
       "</text>",
       left, kBarChartTop, std::max(step, 1.0), kPlotHeight, mid, kBarChartTop - 16,
       right_half ? "end" : "start");
}

// One pair's bar (or its marks): from the axis's bottom to the value.
void append_bar(const BarChart& c, const PairResult& p, size_t i, double step,
                fmt::memory_buffer& out) {
  const double v = c.values[i];
  const double gap = step > kGapFrom ? step * kGapShare : 0;
  const double x = kBarChartLeft + static_cast<double>(i) * step + gap / 2;
  const double width = std::max(step - gap, kMinBarWidth);
  const double mid = x + width / 2;
  const double bottom = kBarChartTop + kPlotHeight;
  const Verdict verdict = p.judgement.verdict;
  putf(out, "<g class=\"bar {}\"><title>", verdict_class(verdict));
  put_escaped(out, tip(p));
  put(out, "</title>");
  if (std::isnan(v) && verdict != Verdict::kUnmatched) {
    putf(out, "<line class=\"undefined\" x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\"/>",
         mid, kBarChartTop, bottom);
  } else if (!std::isnan(v)) {
    const double top = (c.log && v <= 0) ? bottom - 1 : std::min(c.y(v), bottom - 1);
    putf(out, "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\"/>", x, top, width,
         bottom - top);
  }
  if (verdict == Verdict::kFail) {
    putf(out, "<path class=\"mark-fail\" d=\"M{:.2f} {:.1f}l{} 0l-{} {}z\"/>", mid - kMarkSize,
         kBarChartTop - kMarkSize - 6, 2 * kMarkSize, kMarkSize, kMarkSize + 2);
  } else if (verdict == Verdict::kUnmatched) {
    putf(out, "<circle class=\"mark-unmatched\" cx=\"{:.2f}\" cy=\"{:.1f}\" r=\"{}\"/>", mid,
         bottom - kMarkSize, kMarkSize / 2 + 1);
  }
  put(out, "</g>");
}
// The legend's keys: the verdicts, the first failure, the lines.
void append_legend(const BarChart& c, const XNames& x, fmt::memory_buffer& out) {
  put(out,
      "<div class=\"legend\"><span><svg class=\"key\" viewBox=\"0 0 28 10\"><rect "
      "x=\"1\" y=\"1\" width=\"26\" height=\"8\" fill=\"#1f6fb4\"/></svg>pass</span><span><svg "
      "class=\"key\" viewBox=\"0 0 28 10\"><rect x=\"1\" y=\"1\" width=\"26\" height=\"8\" "
      "fill=\"#d62728\"/></svg>fail (marked ▼ above)</span><span><svg class=\"key\" viewBox=\"0 0 "
      "28 10\"><circle cx=\"14\" cy=\"5\" r=\"3\" fill=\"#999\"/></svg>unmatched</span>");
  if (x.first_fail) {
    put(out,
        "<span><svg class=\"key\" viewBox=\"0 0 28 10\"><rect class=\"first-fail\" x=\"1\" "
        "y=\"0\" width=\"26\" height=\"10\"/></svg>first failure in execution order</span>");
  }
  if (!c.thresholds.empty()) {
    put(out,
        "<span><svg class=\"key\" viewBox=\"0 0 28 10\"><line class=\"threshold\" x1=\"1\" "
        "y1=\"5\" x2=\"27\" y2=\"5\"/></svg>the rule's thresholds (below)</span>");
  }
  put(out, "</div>");
}

// Under the plot: what crossing each line means, or why there is none.
void append_threshold_notes(const BarChart& c, fmt::memory_buffer& out) {
  if (!c.rule_note.empty()) {
    put(out, "<p class=\"note rule-note\">");
    put_escaped(out, c.rule_note);
    put(out, "</p>");
  }
  if (c.thresholds.empty()) return;
  put(out, "<ul class=\"thresholds\">");
  for (const Threshold& t : c.thresholds) {
    put(out, "<li><b>");
    put_escaped(out, t.label);
    put(out, "</b> (");
    put_escaped(out, t.source);
    put(out, "): ");
    put_escaped(out, t.meaning);
    put(out, ".</li>");
  }
  put(out, "</ul>");
  if (!c.also_fails.empty()) {
    put(out, "<p class=\"note rule-note\">");
    put_escaped(out, c.also_fails);
    put(out, "</p>");
  }
}

void append_chart(const BarChart& c, const std::vector<const PairResult*>& pairs,
                  fmt::memory_buffer& out) {
  const double step = c.plot_width() / static_cast<double>(std::max<size_t>(pairs.size(), 1));
  const XNames x = x_names(pairs, step);
  putf(out, "<figure class=\"chart\" id=\"{}\"><figcaption>", c.id);
  put_escaped(out, c.caption);
  put(out, "</figcaption>");
  append_legend(c, x, out);
  putf(out, "<svg class=\"bars\" viewBox=\"0 0 {} {:.0f}\" role=\"img\">", kBarChartWidth,
       kBarChartTop + kPlotHeight + x.height);
  append_first_failure(x, step, out);
  append_y_axis(c, out);
  append_x_axis(c, pairs, x, out);
  for (size_t i = 0; i < pairs.size(); ++i) append_bar(c, *pairs[i], i, step, out);
  append_thresholds(c, out);
  put(out, "</svg>");
  append_threshold_notes(c, out);
  put(out, "</figure>\n");
}

void append_head(const precision::CompareResult& r, fmt::memory_buffer& out) {
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>plumb precision report · ");
  put_escaped(out, summary_line(r));
  put(out, "</title><style>");
  put(out, kPageStyle);
  put(out, kPrecisionStyle);
  put(out, "</style></head><body>\n");
}

void append_header(const precision::CompareResult& r, fmt::memory_buffer& out) {
  put(out, "<header><h1>plumb precision report</h1><ul class=\"facts\"><li>A (under test): <code>");
  put_escaped(out, r.a);
  put(out, "</code></li><li>B (reference): <code>");
  put_escaped(out, r.b);
  put(out, "</code></li><li>Mode: ");
  put_escaped(out, r.mode);
  put(out, " · rule: ");
  put_escaped(out, r.rule);
  putf(out, "</li><li><b>{}</b></li></ul>", summary_line(r));
  put(out,
      "<nav><a href=\"#charts\">Per operator</a><a href=\"#first-divergence\">First "
      "divergence</a><a href=\"#pairs\">Pairs</a></nav></header>\n");
}

void append_precision_charts(const precision::CompareResult& r, const PrecisionHtmlOptions& o,
                             fmt::memory_buffer& out) {
  put(out, "<section id=\"charts\"><h2>Per operator</h2>");
  const std::vector<const PairResult*> pairs = in_execution_order(r);
  if (pairs.empty()) {
    put(out, "<p class=\"note\">No pair to draw.</p></section>\n");
    return;
  }
  if (r.pairs.size() > pairs.size()) {
    putf(out,
         "<p class=\"note\">The first {} of {} pairs are drawn; the table, the CSV and the JSON "
         "have every pair.</p>",
         pairs.size(), r.pairs.size());
  }
  const bool msprobe = r.rule == "msprobe";
  if (statistics_mode(r)) {
    put(out,
        "<p class=\"note\">Statistics mode: the dumps hold each tensor's max, min, mean and L2 "
        "norm, not its elements, so there is no cosine; a dump in tensor mode gives one.</p>");
    append_chart(stat_rel_chart(pairs, o.thresholds), pairs, out);
  } else {
    append_chart(cosine_chart(pairs, msprobe, o.thresholds), pairs, out);
    append_chart(max_abs_chart(pairs, msprobe, o.thresholds), pairs, out);
  }
  put(out, "</section>\n");
}

void append_first_divergence(const precision::CompareResult& r, fmt::memory_buffer& out) {
  put(out, "<section id=\"first-divergence\"><h2>First divergence</h2>");
  if (r.mode != "dump-tensors" && r.mode != "dump-statistics") {
    put(out,
        "<p class=\"note\">Only between two dumps: files have no API calls with inputs and "
        "outputs.</p></section>\n");
    return;
  }
  if (r.first_divergence.empty()) {
    put(out,
        "<p class=\"note\">None: no API call whose inputs pass has an output that fails.</p>"
        "</section>\n");
    return;
  }
  put(out,
      "<p class=\"note\">The API calls whose inputs pass but whose outputs fail, in execution "
      "order: where the error was introduced.</p><ol>");
  for (size_t i : r.first_divergence) {
    if (i >= r.pairs.size()) continue;
    const PairResult& p = r.pairs[i];
    put(out, "<li><code>");
    put_escaped(out, p.name);
    put(out, "</code> — ");
    put_escaped(out, p.judgement.why);
    put(out, "</li>");
  }
  put(out, "</ol></section>\n");
}

void append_row(const PairResult& p, bool statistics, fmt::memory_buffer& out) {
  const Verdict v = p.judgement.verdict;
  putf(out, "<tr class=\"{}\"><td>{}</td><td class=\"name\">", verdict_class(v),
       precision::verdict_name(v));
  put_escaped(out, p.name);
  put(out, "</td>");
  cell(out, pair_dtype(p));
  cell(out, pair_shape(p));
  const double nan = precision::kUndefined;
  if (statistics) {
    const precision::StatDiffs d = p.stat_diffs.value_or(precision::StatDiffs{});
    const bool known = p.stat_diffs.has_value();
    for (double x : {d.max_diff, d.min_diff, d.mean_diff, d.norm_diff}) {
      cell(out, error_text(known ? x : nan), "num");
    }
    cell(out, ratio_text(known ? d.norm_rel : nan), "num");
  } else {
    const precision::Metrics m = p.metrics.value_or(precision::Metrics{});
    const bool known = p.metrics.has_value();
    cell(out, cosine_text(known ? m.cosine : nan), "num");
    for (double x : {m.max_abs_err, m.max_rel_err, m.mean_abs_err, m.rmse, m.euclidean}) {
      cell(out, error_text(known ? x : nan), "num");
    }
    cell(out, ratio_text(known ? m.one_thousandth_ratio : nan), "num");
    cell(out, ratio_text(known ? m.five_thousandths_ratio : nan), "num");
    cell(out, known ? fmt::format("{} / {}", m.nan_a, m.nan_b) : "n/a", "num");
  }
  cell(out, p.judgement.why, "why");
  put(out, "</tr>");
}

void append_table(const precision::CompareResult& r, fmt::memory_buffer& out) {
  put(out, "<section id=\"pairs\"><h2>Pairs</h2>");
  const std::vector<size_t> order = severity_order(r);
  const size_t shown = std::min(order.size(), kMaxPrecisionTableRows);
  putf(out,
       "<p class=\"note\">Failed first, then unmatched, then passed; within each {}.{}</p>",
       statistics_mode(r) ? "the largest L2 norm relative difference first"
                          : "the lowest cosine and the largest error first",
       shown < order.size()
           ? fmt::format(" The first {} of {} rows; the CSV and the JSON have every pair.", shown,
                         order.size())
           : "");
  const bool statistics = statistics_mode(r);
  put(out, "<table class=\"rows pairs\"><tr><th>verdict</th><th>name</th><th>dtype</th><th>shape</th>");
  if (statistics) {
    put(out,
        "<th>max diff</th><th>min diff</th><th>mean diff</th><th>l2norm diff</th>"
        "<th>l2norm rel</th>");
  } else {
    put(out,
        "<th>cosine</th><th>max abs err</th><th>max rel err</th><th>mean abs err</th>"
        "<th>RMSE</th><th>EucDist</th><th>1‰ ratio</th><th>5‰ ratio</th><th>NaN A / B</th>");
  }
  put(out, "<th>why</th></tr>");
  for (size_t k = 0; k < shown; ++k) append_row(r.pairs[order[k]], statistics, out);
  put(out, "</table></section>\n");
}

}  // namespace

void write_precision_html(const precision::CompareResult& result,
                          const PrecisionHtmlOptions& options, std::ostream& out) {
  fmt::memory_buffer page;
  append_head(result, page);
  append_header(result, page);
  append_precision_charts(result, options, page);
  append_first_divergence(result, page);
  append_table(result, page);
  page.append(kPageEnd.data(), kPageEnd.data() + kPageEnd.size());
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
}

}  // namespace plumb::report
