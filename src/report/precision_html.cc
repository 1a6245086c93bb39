// `plumb precision compare --html`: one self-contained page like the other reports (kPageStyle,
// inline SVG drawn here, no script, nothing by URL). See precision_reporter.h for its sections
// and docs/precision.md for how to read it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
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
constexpr std::string_view kStyle = R"(
ul.facts{margin:4px 0 8px;padding-left:20px}
svg.bars{width:100%;max-width:1300px;height:auto;display:block}
.bar.pass rect{fill:#1f6fb4}.bar.fail rect{fill:#d62728}.bar:hover rect{fill:#000}
.mark-fail{fill:#d62728}.mark-unmatched{fill:#999}.undefined{stroke:#d62728;stroke-dasharray:2 2}
.threshold{stroke:#e8710a;stroke-width:1;stroke-dasharray:6 3}.tlabel{font-size:11px;fill:#e8710a}
tr.fail td{color:#a40000}tr.unmatched td{color:#777}td.name{font-family:monospace}
td.num{white-space:nowrap}
)";

constexpr double kWidth = 960;
constexpr double kLeft = 72;   // y tick labels
constexpr double kRight = 20;
constexpr double kTop = 14;    // room for the fail marks above the plot
constexpr double kPlotHeight = 220;
constexpr double kAxisHeight = 36;
constexpr double kMarkSize = 4;
constexpr double kMinBarWidth = 0.4;   // thinner bars are still drawn this wide
constexpr double kGapFrom = 3;         // bars wider than this get a gap
constexpr double kGapShare = 0.2;
constexpr double kLinearTicks = 4;
constexpr double kCosinePad = 0.01;    // below the lowest cosine
constexpr double kLogSpan = 1e12;      // the log axis covers at most 12 decades

bool statistics_mode(const precision::CompareResult& r) { return r.mode == "dump-statistics"; }

std::string_view verdict_class(Verdict v) { return precision::verdict_name(v); }

// One chart: a value per pair in execution order (NaN: not computed or undefined).
struct BarChart {
  std::string id;
  std::string caption;
  std::string y_title;
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<std::pair<double, std::string>> thresholds;  // value, label
  std::vector<double> values;

  double plot_width() const { return kWidth - kLeft - kRight; }
  double y(double v) const {
    double share = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                       : (v - lo) / (hi - lo);
    share = std::clamp(std::isnan(share) ? 0.0 : share, 0.0, 1.0);
    return kTop + kPlotHeight * (1 - share);
  }
};

std::vector<const PairResult*> in_execution_order(const precision::CompareResult& r) {
  std::vector<const PairResult*> pairs;
  for (const PairResult& p : r.pairs) pairs.push_back(&p);
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const PairResult* a, const PairResult* b) { return a->order < b->order; });
  if (pairs.size() > kMaxPrecisionBars) pairs.resize(kMaxPrecisionBars);
  return pairs;
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
    c.thresholds = {{t.cosine_pass, fmt::format("{:g}", t.cosine_pass)},
                    {t.cosine_fail, fmt::format("{:g}", t.cosine_fail)}};
  }
  return c;
}

// A log axis over the decades the positive values (and the thresholds) span.
BarChart log_chart(std::string id, std::string caption, std::string y_title,
                   std::vector<double> values, std::vector<double> marks) {
  BarChart c;
  c.id = std::move(id);
  c.caption = std::move(caption);
  c.y_title = std::move(y_title);
  c.log = true;
  double lo = HUGE_VAL, hi = 0;
  for (double v : values) {
    if (std::isfinite(v) && v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  for (double m : marks) {
    if (m > 0) lo = std::min(lo, m), hi = std::max(hi, m);
  }
  if (hi == 0) lo = 1e-6, hi = 1;
  c.hi = std::pow(10, std::ceil(std::log10(hi)));
  c.lo = std::max(std::pow(10, std::floor(std::log10(lo))), c.hi / kLogSpan);
  if (c.lo >= c.hi) c.lo = c.hi / 10;
  c.values = std::move(values);
  for (double m : marks) c.thresholds.push_back({m, fmt::format("{:g}", m)});
  return c;
}

BarChart max_abs_chart(const std::vector<const PairResult*>& pairs, bool msprobe,
                       const precision::Thresholds& t) {
  std::vector<double> values;
  for (const PairResult* p : pairs) {
    values.push_back(p->metrics ? p->metrics->max_abs_err : precision::kUndefined);
  }
  return log_chart("max-abs", "Max absolute error per operator, in execution order (log scale)",
                   "max abs err", std::move(values),
                   msprobe ? std::vector<double>{t.abs_with_cosine, t.max_abs_fail}
                           : std::vector<double>{});
}

BarChart stat_rel_chart(const std::vector<const PairResult*>& pairs, const precision::Thresholds& t) {
  std::vector<double> values;
  for (const PairResult* p : pairs) {
    values.push_back(p->stat_diffs ? p->stat_diffs->norm_rel : precision::kUndefined);
  }
  return log_chart("norm-rel",
                   "Relative difference of the L2 norm per operator, in execution order (log "
                   "scale)",
                   "L2 norm rel diff", std::move(values), {t.stats_rel_fail});
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
         kLeft, c.y(v), kWidth - kRight, kLeft - 4, c.y(v) + 4, v);
  }
  putf(out,
       "<text class=\"axis\" transform=\"translate(14 {:.1f}) rotate(-90)\" "
       "text-anchor=\"middle\">",
       kTop + kPlotHeight / 2);
  put_escaped(out, c.y_title);
  put(out, "</text>");
}

void append_x_axis(const BarChart& c, size_t n, fmt::memory_buffer& out) {
  const double bottom = kTop + kPlotHeight;
  const double step = c.plot_width() / static_cast<double>(std::max<size_t>(n, 1));
  for (double t : linear_ticks(static_cast<double>(n))) {
    if (t >= static_cast<double>(n) && n > 0) break;
    const double x = kLeft + (t + 0.5) * step;
    putf(out, "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}</text>",
         x, bottom + 13, t);
  }
  putf(out,
       "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
       "<text class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">operator, in "
       "execution order</text>",
       kLeft, kTop, c.plot_width(), kPlotHeight, kLeft + c.plot_width() / 2, bottom + 30);
}

void append_thresholds(const BarChart& c, fmt::memory_buffer& out) {
  for (const auto& [value, label] : c.thresholds) {
    if (value < c.lo || value > c.hi) continue;
    putf(out,
         "<line class=\"threshold\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
         "<text class=\"tlabel\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
         kLeft, c.y(value), kWidth - kRight, kWidth - kRight - 2, c.y(value) - 3, label);
  }
}

// One pair's bar (or its marks): from the axis's bottom to the value.
void append_bar(const BarChart& c, const PairResult& p, size_t i, double step,
                fmt::memory_buffer& out) {
  const double v = c.values[i];
  const double gap = step > kGapFrom ? step * kGapShare : 0;
  const double x = kLeft + static_cast<double>(i) * step + gap / 2;
  const double width = std::max(step - gap, kMinBarWidth);
  const double mid = x + width / 2;
  const double bottom = kTop + kPlotHeight;
  const Verdict verdict = p.judgement.verdict;
  putf(out, "<g class=\"bar {}\"><title>", verdict_class(verdict));
  put_escaped(out, tip(p));
  put(out, "</title>");
  if (std::isnan(v) && verdict != Verdict::kUnmatched) {
    putf(out, "<line class=\"undefined\" x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\"/>",
         mid, kTop, bottom);
  } else if (!std::isnan(v)) {
    const double top = (c.log && v <= 0) ? bottom - 1 : std::min(c.y(v), bottom - 1);
    putf(out, "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\"/>", x, top, width,
         bottom - top);
  }
  if (verdict == Verdict::kFail) {
    putf(out, "<path class=\"mark-fail\" d=\"M{:.2f} {:.1f}l{} 0l-{} {}z\"/>", mid - kMarkSize,
         kTop - kMarkSize - 6, 2 * kMarkSize, kMarkSize, kMarkSize + 2);
  } else if (verdict == Verdict::kUnmatched) {
    putf(out, "<circle class=\"mark-unmatched\" cx=\"{:.2f}\" cy=\"{:.1f}\" r=\"{}\"/>", mid,
         bottom - kMarkSize, kMarkSize / 2 + 1);
  }
  put(out, "</g>");
}

void append_chart(const BarChart& c, const std::vector<const PairResult*>& pairs,
                  fmt::memory_buffer& out) {
  putf(out, "<figure class=\"chart\" id=\"{}\"><figcaption>", c.id);
  put_escaped(out, c.caption);
  put(out,
      "</figcaption><div class=\"legend\"><span><svg class=\"key\" viewBox=\"0 0 28 10\"><rect "
      "x=\"1\" y=\"1\" width=\"26\" height=\"8\" fill=\"#1f6fb4\"/></svg>pass</span><span><svg "
      "class=\"key\" viewBox=\"0 0 28 10\"><rect x=\"1\" y=\"1\" width=\"26\" height=\"8\" "
      "fill=\"#d62728\"/></svg>fail (marked ▼ above)</span><span><svg class=\"key\" viewBox=\"0 0 "
      "28 10\"><circle cx=\"14\" cy=\"5\" r=\"3\" fill=\"#999\"/></svg>unmatched</span>");
  if (!c.thresholds.empty()) {
    put(out,
        "<span><svg class=\"key\" viewBox=\"0 0 28 10\"><line class=\"threshold\" x1=\"1\" "
        "y1=\"5\" x2=\"27\" y2=\"5\"/></svg>the rule's thresholds</span>");
  }
  put(out, "</div>");
  putf(out, "<svg class=\"bars\" viewBox=\"0 0 {} {}\" role=\"img\">", kWidth,
       kTop + kPlotHeight + kAxisHeight);
  append_y_axis(c, out);
  append_x_axis(c, pairs.size(), out);
  const double step = c.plot_width() / static_cast<double>(std::max<size_t>(pairs.size(), 1));
  for (size_t i = 0; i < pairs.size(); ++i) append_bar(c, *pairs[i], i, step, out);
  append_thresholds(c, out);
  put(out, "</svg></figure>\n");
}

void append_head(const precision::CompareResult& r, fmt::memory_buffer& out) {
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>plumb precision report · ");
  put_escaped(out, summary_line(r));
  put(out, "</title><style>");
  put(out, kPageStyle);
  put(out, kStyle);
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

void append_charts(const precision::CompareResult& r, const PrecisionHtmlOptions& o,
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
  cell(out, p.judgement.why);
  put(out, "</tr>");
}

void append_table(const precision::CompareResult& r, fmt::memory_buffer& out) {
  put(out, "<section id=\"pairs\"><h2>Pairs</h2>");
  const std::vector<size_t> order = severity_order(r);
  const size_t shown = std::min(order.size(), kMaxPrecisionTableRows);
  putf(out,
       "<p class=\"note\">Failed first, then unmatched, then passed; within each the lowest "
       "cosine and the largest error first.{}</p>",
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
  append_charts(result, options, page);
  append_first_divergence(result, page);
  append_table(result, page);
  page.append(kPageEnd.data(), kPageEnd.data() + kPageEnd.size());
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
}

}  // namespace plumb::report
