#include "report/serve_pareto_html.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

#include "report/html_escape.h"
#include "report/html_out.h"
#include "report/html_style.h"
#include "report/svg_chart.h"

namespace plumb::report {
namespace {

// After kPageStyle (html_style.h). k0: the frontier, k2: met the SLO, k4: missed it, k5: a run
// with no verdict (a sweep's).
constexpr std::string_view kParetoStyle = R"(
svg.lchart{width:100%;max-width:1100px;height:auto;display:block}
.k0{stroke:#1f6fb4;fill:#1f6fb4}.k2{stroke:#2ca02c;fill:#2ca02c}.k4{stroke:#d62728;fill:#d62728}
.k5{stroke:#8c8c8c;fill:#8c8c8c}.line{fill:none;stroke-width:1.6}td.front{font-weight:600}
)";
constexpr int kFrontierColour = 0;
constexpr int kMetColour = 2;
constexpr int kMissedColour = 4;
constexpr int kPlainColour = 5;
constexpr double kParetoChartHeight = 360;

std::string tip(const serve::ParetoPoint& p) {
  std::string t = fmt::format("{}\n{:.4g} tok/s per user (mean TPOT {:.4g} ms)\n{:.4g} tok/s per card",
                              p.label, p.tokens_per_s_per_user, p.tpot_mean_ms, p.tokens_per_s_per_card);
  if (p.met_slo) t += *p.met_slo ? "\nmet the SLO" : "\nmissed the SLO";
  if (p.on_frontier) t += "\non the frontier";
  return t;
}

std::vector<serve::ParetoPoint> by_user_speed(std::vector<serve::ParetoPoint> points) {
  std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
    return a.tokens_per_s_per_user < b.tokens_per_s_per_user;
  });
  return points;
}

int colour_of(const serve::ParetoPoint& p) {
  return !p.met_slo ? kPlainColour : *p.met_slo ? kMetColour : kMissedColour;
}

LinearChart chart_of(const std::vector<serve::ParetoPoint>& points) {
  LinearChart c;
  c.title = "output tokens/s per card";
  c.x_title = "tokens/s per user (1000 / mean TPOT ms)";
  c.y_bytes = false;
  c.height = kParetoChartHeight;
  LinearSeries frontier{"frontier", kFrontierColour, SeriesStyle::kLine, {}, {}, {}};
  LinearSeries met{"met the SLO", kMetColour, SeriesStyle::kPoints, {}, {}, {}};
  LinearSeries missed{"missed the SLO", kMissedColour, SeriesStyle::kPoints, {}, {}, {}};
  LinearSeries plain{"run", kPlainColour, SeriesStyle::kPoints, {}, {}, {}};
  for (const serve::ParetoPoint& p : by_user_speed(points)) {
    if (p.on_frontier) {
      frontier.x.push_back(p.tokens_per_s_per_user);
      frontier.y.push_back(p.tokens_per_s_per_card);
    }
    const int colour = colour_of(p);
    LinearSeries& s = colour == kMetColour ? met : colour == kMissedColour ? missed : plain;
    s.x.push_back(p.tokens_per_s_per_user);
    s.y.push_back(p.tokens_per_s_per_card);
    s.tips.push_back(tip(p));
  }
  for (LinearSeries* s : {&frontier, &met, &missed, &plain}) {
    if (!s->x.empty()) c.series.push_back(std::move(*s));
  }
  return c;
}

void append_table(const std::vector<serve::ParetoPoint>& points, fmt::memory_buffer& out) {
  put(out, "<table><tr><th>load</th><th>tok/s per user</th><th>tok/s per card</th>"
           "<th>mean TPOT ms</th><th>SLO</th><th>cost per M output tokens</th><th>frontier</th></tr>");
  for (const serve::ParetoPoint& p : by_user_speed(points)) {
    put(out, p.on_frontier ? "<tr><td class=\"front\">" : "<tr><td>");
    append_escaped(out, p.label);
    putf(out, "</td><td class=\"num\">{:.4g}</td><td class=\"num\">{:.4g}</td><td class=\"num\">{:.4g}</td>",
         p.tokens_per_s_per_user, p.tokens_per_s_per_card, p.tpot_mean_ms);
    putf(out, "<td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
         !p.met_slo ? "-" : *p.met_slo ? "met" : "missed",
         p.cost_per_million_output_tokens ? fmt::format("{:.4g}", *p.cost_per_million_output_tokens) : "-",
         p.on_frontier ? "yes" : "");
  }
  put(out, "</table>");
}

}  // namespace

void append_pareto_section(const std::vector<serve::ParetoPoint>& points, fmt::memory_buffer& out) {
  put(out, "<section id=\"pareto\"><h2>Tokens/s per user against tokens/s per card</h2>");
  if (points.empty()) {
    put(out, "<p class=\"note\">No run measured a TPOT: nothing to plot.</p></section>\n");
    return;
  }
  put(out, "<p class=\"note\">Right is faster for each user, up is more for each card. The "
           "frontier joins the runs no other run beats on both. Hover a point for its "
           "figures.</p><figure class=\"chart\"><figcaption>Pareto frontier</figcaption>");
  const LinearChart c = chart_of(points);
  append_linear_legend(c, out);
  draw_linear_chart(c, out);
  put(out, "</figure>");
  append_table(points, out);
  put(out, "</section>\n");
}

std::string pareto_html(const std::vector<serve::ParetoPoint>& points, const std::string& title) {
  fmt::memory_buffer out;
  put(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>plumb serve · ");
  append_escaped(out, title);
  put(out, "</title><style>");
  put(out, kPageStyle);
  put(out, kParetoStyle);
  put(out, "</style></head><body>\n<header><h1>plumb serve · ");
  append_escaped(out, title);
  put(out, "</h1></header>\n");
  append_pareto_section(points, out);
  out.append(kPageEnd.data(), kPageEnd.data() + kPageEnd.size());
  return fmt::to_string(out);
}

}  // namespace plumb::report
