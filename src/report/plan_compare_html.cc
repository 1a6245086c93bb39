#include "report/plan_compare_html.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "report/html_escape.h"
#include "report/html_out.h"
#include "report/html_style.h"
#include "report/plan_reporter.h"
#include "report/svg_chart.h"

namespace plumb::report {
namespace {

// After kPageStyle (html_style.h), as the other reports. k0..k9: one colour per chip (the mem
// report's palette).
constexpr std::string_view kPlanCompareStyle = R"(
ul.facts{margin:4px 0 8px;padding-left:20px}
td.best{background:#e3f4e1;font-weight:600}td.none{color:#888}td.chip{white-space:nowrap}
td.layout{min-width:18em}
svg.lchart{width:100%;max-width:1300px;height:auto;display:block}
.k0{stroke:#1f6fb4;fill:#1f6fb4}.k1{stroke:#e8710a;fill:#e8710a}.k2{stroke:#2ca02c;fill:#2ca02c}
.k3{stroke:#9467bd;fill:#9467bd}.k4{stroke:#d62728;fill:#d62728}.k5{stroke:#8c8c8c;fill:#8c8c8c}
.k6{stroke:#bcbd22;fill:#bcbd22}.k7{stroke:#17becf;fill:#17becf}.k8{stroke:#8c564b;fill:#8c564b}
.k9{stroke:#e377c2;fill:#e377c2}
.line{fill:none;stroke-width:1.6}
.plabel{font-size:11px;fill:#333;paint-order:stroke;stroke:#fff;stroke-width:3px}
)";
constexpr int kColours = 10;
constexpr double kCompareChartHeight = 300;
constexpr double kMillion = 1e6;
// Room inside each edge of a chart's plot for a point (radius 3.5) and its label beside it.
constexpr double kChartEdgePad = 16;

// One figure of the table or a chart, read from a row's costs.
using CostField = std::function<std::optional<double>(const plan::CompareCosts&)>;

struct CompareColumn {
  const char* title;
  CostField field;
  const char* format;  // of the cell; money goes through usd_short
  bool money = false;
  bool highlight = true;  // the lowest of its group is the best
  // Under a budget every cluster costs about the budget: the lowest price is no merit there.
  bool highlight_under_budget = true;
};

const std::vector<CompareColumn>& cost_columns() {
  static const std::vector<CompareColumn> columns = {
      {"days", [](const plan::CompareCosts& k) { return std::optional(k.days); }, "{:.1f}"},
      {"device-hours", [](const plan::CompareCosts& k) { return std::optional(k.device_hours); },
       "", false},
      {"energy MWh", [](const plan::CompareCosts& k) { return k.energy_mwh; }, "{:.0f}"},
      {"site MW", [](const plan::CompareCosts& k) { return k.site_mw; }, "{:.1f}", false, false},
      {"buy", [](const plan::CompareCosts& k) { return k.buy_usd; }, "", true, true, false},
      {"rent", [](const plan::CompareCosts& k) { return k.rent_usd; }, "", true},
      {"rent costs the price after", [](const plan::CompareCosts& k) { return k.break_even_days; },
       "{:.0f} days", false, false},  // a fact of the prices, not a merit
  };
  return columns;
}

std::string cell_text(const CompareColumn& col, double v) {
  if (col.money) return usd_short(v);
  if (*col.format == '\0') return count_short(v);
  return fmt::format(fmt::runtime(col.format), v);
}

// Rows compare with those of the same budget tier, or of the same device count.
double group_of(const plan::CompareRow& r) {
  return r.budget_share > 0 ? r.budget_share : static_cast<double>(r.devices);
}

// The best value of a column in each group, for the highlight.
std::optional<double> best_in_group(const plan::Comparison& c, const CompareColumn& col,
                                    double group) {
  std::optional<double> best;
  for (const plan::ChipComparison& chip : c.chips) {
    for (const plan::CompareRow& r : chip.rows) {
      if (!r.costs || group_of(r) != group) continue;
      const std::optional<double> v = col.field(*r.costs);
      if (v && (!best || *v < *best)) best = v;
    }
  }
  return best;
}

std::string tier_text(const plan::CompareRow& r) {
  return r.budget_share > 0 ? fmt::format("{:.0f}%", 100 * r.budget_share) : "—";
}

void append_head(const plan::Comparison& c, fmt::memory_buffer& out) {
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>plumb plan compare · ");
  append_escaped(out, c.model);
  put(out, "</title><style>");
  put(out, kPageStyle);
  put(out, kPlanCompareStyle);
  put(out, "</style></head><body>\n");
}

void append_header(const plan::Comparison& c, fmt::memory_buffer& out) {
  const plan::CompareSpec& s = c.spec;
  put(out, "<header><h1>plumb plan compare · ");
  append_escaped(out, c.model);
  putf(out, "</h1><ul class=\"facts\"><li>Training <b>{:.3g} tokens</b> of ", s.tokens);
  append_escaped(out, c.model);
  putf(out, " at {:.3g} tokens per step, in ", s.space.batch_tokens);
  append_escaped(out, s.precision);
  put(out, " where a chip has it.</li><li>");
  if (s.budget_usd) {
    putf(out,
         "Budget <b>{}</b> to buy each chip's cluster: the most whole nodes it buys (a node count "
         "with no prime factor above 5), and the clusters half and a quarter of it buy.",
         usd_short(*s.budget_usd));
  } else {
    put(out, "Every chip at the same device counts.");
  }
  putf(out,
       "</li><li>At each count the fastest layout that fits (<code>plumb plan search</code>), "
       "then {:.3g} failures per device-hour, checkpoints at {:g} GB/s and {:.0f} s restarts "
       "(goodput). Energy and site power at TDP × PUE {:g}.</li>",
       s.outlook.failures_per_device_hour, s.outlook.storage_gbps, s.outlook.restart_s,
       s.outlook.pue);
  putf(out, "<li>{} chip(s) searched in {:.2f} s.</li></ul>", c.chips.size(), c.seconds);
  put(out,
      "<nav><a href=\"#table\">Table</a><a href=\"#charts\">Charts</a>"
      "<a href=\"#prices\">Prices</a></nav></header>\n");
}

void append_cost_cells(const plan::Comparison& c, const plan::CompareRow& r,
                       fmt::memory_buffer& out) {
  for (const CompareColumn& col : cost_columns()) {
    const std::optional<double> v = r.costs ? col.field(*r.costs) : std::nullopt;
    if (!v) {
      put(out, "<td class=\"num none\">—</td>");
      continue;
    }
    const bool highlight = col.highlight && (col.highlight_under_budget || r.budget_share == 0);
    const std::optional<double> best =
        highlight ? best_in_group(c, col, group_of(r)) : std::nullopt;
    putf(out, "<td class=\"num{}\">{}</td>", best && *best == *v ? " best" : "",
         cell_text(col, *v));
  }
}

// "43–58%": the MFU at the two ends of the row's 80% band; "—" without one.
std::string mfu_band_text(const plan::CompareRow& r) {
  if (!r.best || !r.band || r.band->empty()) return "—";
  const BandedFigures f = banded(*r.band, *r.best);
  return fmt::format("{:.0f}–{:.0f}%", 100 * f.mfu_low, 100 * f.mfu_high);
}

void append_row(const plan::Comparison& c, const plan::ChipComparison& chip,
                const plan::CompareRow& r, fmt::memory_buffer& out) {
  put(out, "<tr><td class=\"chip\">");
  append_escaped(out, chip.chip.label);
  put(out, "</td><td>");
  append_escaped(out, chip.precision);
  putf(out, "</td><td class=\"num\">{}</td><td class=\"num\">{}</td>", r.devices, tier_text(r));
  if (!r.best) {
    putf(out, "<td colspan=\"{}\" class=\"none\">", 4 + cost_columns().size());
    append_escaped(out, r.why);
    put(out, "</td></tr>");
    return;
  }
  put(out, "<td class=\"layout\">");
  append_escaped(out, layout_text(r.best->layout));
  putf(out, "</td><td class=\"num\">{:.1f}%</td><td class=\"num\">{}</td><td class=\"num\">{:.1f}%</td>",
       100 * r.best->mfu, mfu_band_text(r), 100 * r.outlook.at_daly.goodput);
  append_cost_cells(c, r, out);
  put(out, "</tr>");
}

void append_table(const plan::Comparison& c, fmt::memory_buffer& out) {
  put(out,
      "<section id=\"table\"><h2>Every chip at every count</h2><p class=\"note\">The best of each "
      "column among the rows of the same budget share (or device count) is highlighted (the price "
      "only at the same count: under a budget every cluster costs about the budget). Buy is "
      "the devices' price (their share of the servers), not the network, the building or the "
      "power; rent is the run's device-hours at the catalog's hourly rate.</p>"
      "<table><tr><th>chip</th><th>precision</th><th>devices</th><th>budget</th>"
      "<th>best layout</th><th>MFU</th><th>MFU 80% band</th><th>goodput</th>");
  for (const CompareColumn& col : cost_columns()) putf(out, "<th>{}</th>", col.title);
  put(out, "</tr>");
  for (const plan::ChipComparison& chip : c.chips) {
    for (const plan::CompareRow& r : chip.rows) append_row(c, chip, r, out);
  }
  put(out, "</table></section>\n");
}

std::string point_tip(const plan::ChipComparison& chip, const plan::CompareRow& r) {
  const plan::CompareCosts& k = *r.costs;
  std::string tip = fmt::format("{} · {} devices", chip.chip.label, r.devices);
  if (r.budget_share > 0) tip += fmt::format(" ({:.0f}% of the budget)", 100 * r.budget_share);
  tip += fmt::format("\n{}\n{:.1f} days · MFU {:.1f}% (80% band {}) · goodput {:.1f}%",
                     layout_text(r.best->layout), k.days, 100 * r.best->mfu, mfu_band_text(r),
                     100 * r.outlook.at_daly.goodput);
  if (k.buy_usd) tip += "\nbuy " + usd_short(*k.buy_usd);
  if (k.rent_usd) tip += "\nrent " + usd_short(*k.rent_usd);
  if (k.energy_mwh) tip += fmt::format("\n{:.0f} MWh · {:.1f} MW", *k.energy_mwh, *k.site_mw);
  return tip;
}

// A chip as the legend names it: the hardware file's name and the label of the table's rows,
// "NVIDIA H100 SXM · h100-sxm"; the label alone for a file without a name.
std::string series_name(const plan::CompareChip& chip) {
  if (chip.hardware.name.empty() || chip.hardware.name == chip.label) return chip.label;
  return fmt::format("{} · {}", chip.hardware.name, chip.label);
}

// Per chip, one line through its counts in order of days, and its points with their tips and
// their device counts as labels.
LinearChart days_chart(const plan::Comparison& c, std::string title, const CostField& field,
                       double scale, std::string empty_note) {
  LinearChart chart;
  chart.title = std::move(title);
  chart.x_title = "time to train (days)";
  chart.empty_note = std::move(empty_note);
  chart.y_bytes = false;
  chart.height = kCompareChartHeight;
  chart.edge_pad = kChartEdgePad;
  for (size_t i = 0; i < c.chips.size(); ++i) {
    const plan::ChipComparison& chip = c.chips[i];
    std::vector<std::pair<double, const plan::CompareRow*>> rows;
    for (const plan::CompareRow& r : chip.rows) {
      if (r.costs && field(*r.costs)) rows.push_back({r.costs->days, &r});
    }
    if (rows.empty()) continue;
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    const int colour = static_cast<int>(i % kColours);
    LinearSeries line{series_name(chip.chip), colour, SeriesStyle::kLine, {}, {}, {}, {}};
    LinearSeries points{"", colour, SeriesStyle::kPoints, {}, {}, {}, {}};
    for (const auto& [days, r] : rows) {
      const double y = *field(*r->costs) / scale;
      line.x.push_back(days);
      line.y.push_back(y);
      points.x.push_back(days);
      points.y.push_back(y);
      points.tips.push_back(point_tip(chip, *r));
      points.labels.push_back(fmt::format("{}", r->devices));
    }
    chart.series.push_back(std::move(line));
    chart.series.push_back(std::move(points));
  }
  return chart;
}

void append_compare_charts(const plan::Comparison& c, fmt::memory_buffer& out) {
  put(out,
      "<section id=\"charts\"><h2>Time to train against money and energy</h2><p class=\"note\">"
      "One line per chip through its device counts, each point labelled with its device count "
      "(where the label has room): left is faster, lower is cheaper. Hover a point for its "
      "layout and figures.</p>");
  append_linear_figure(days_chart(
                           c, "rent for the run (million USD)",
                           [](const plan::CompareCosts& k) { return k.rent_usd; }, kMillion,
                           "no chip has a rent_usd_per_hour"),
                       "Days and rent", out);
  append_linear_figure(days_chart(
                           c, "price of the devices (million USD)",
                           [](const plan::CompareCosts& k) { return k.buy_usd; }, kMillion,
                           "no chip has a price_usd"),
                       "Days and purchase", out);
  append_linear_figure(
      days_chart(
          c, "energy (MWh, at TDP × PUE)", [](const plan::CompareCosts& k) { return k.energy_mwh; },
          1, "no chip has a tdp_w"),
      "Days and energy", out);
  put(out, "</section>\n");
}

void append_optional(const std::optional<double>& v, std::string_view format,
                     const std::string& date, fmt::memory_buffer& out) {
  if (!v) {
    put(out, "<td class=\"none\">—</td><td></td>");
    return;
  }
  putf(out, "<td class=\"num\">{}</td><td>", fmt::format(fmt::runtime(format), *v));
  append_escaped(out, date.empty() ? "undated" : date);
  put(out, "</td>");
}

void append_prices(const plan::Comparison& c, fmt::memory_buffer& out) {
  put(out,
      "<section id=\"prices\"><h2>Prices and their sources</h2><p class=\"note\">Each figure's "
      "source is in a comment beside it in the file named; the date is when it was quoted.</p>"
      "<table><tr><th>chip</th><th>name</th><th>price (USD)</th><th>quoted</th>"
      "<th>rent (USD per device-hour)</th><th>quoted</th><th>TDP (W)</th><th>file</th></tr>");
  for (const plan::ChipComparison& chip : c.chips) {
    const plan::HardwareSpec& hw = chip.chip.hardware;
    put(out, "<tr><td>");
    append_escaped(out, chip.chip.label);
    put(out, "</td><td>");
    append_escaped(out, hw.name);
    put(out, "</td>");
    append_optional(hw.price_usd, "{:.0f}", hw.price_date, out);
    append_optional(hw.rent_usd_per_hour, "{:.3f}", hw.rent_date, out);
    const std::string tdp = hw.tdp_w ? fmt::format("{:.0f}", *hw.tdp_w) : "—";
    putf(out, "<td class=\"num\">{}</td><td><code>", tdp);
    append_escaped(out, chip.chip.source);
    put(out, "</code></td></tr>");
  }
  put(out, "</table>");
  bool any = false;
  for (const plan::ChipComparison& chip : c.chips) any = any || !chip.notes.empty();
  if (any) {
    put(out, "<h3>Notes</h3><ul>");
    for (const plan::ChipComparison& chip : c.chips) {
      for (const std::string& n : chip.notes) {
        put(out, "<li>");
        append_escaped(out, n);
        put(out, "</li>");
      }
    }
    put(out, "</ul>");
  }
  put(out, "</section>\n");
}

}  // namespace

void render_compare_html(const plan::Comparison& c, fmt::memory_buffer& out) {
  append_head(c, out);
  append_header(c, out);
  append_table(c, out);
  append_compare_charts(c, out);
  append_prices(c, out);
  out.append(kPageEnd.data(), kPageEnd.data() + kPageEnd.size());
}

std::string compare_html(const plan::Comparison& c) {
  fmt::memory_buffer page;
  render_compare_html(c, page);
  return fmt::to_string(page);
}

}  // namespace plumb::report
