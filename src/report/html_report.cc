#include "report/html_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "baseline/context_diff.h"
#include "comm/result.h"
#include "common/strings.h"
#include "report/chart_data.h"
#include "report/comm_summary_text.h"
#include "report/html_charts.h"
#include "report/html_context.h"
#include "report/html_escape.h"
#include "report/html_out.h"
#include "report/html_style.h"
#include "report/round_spread.h"
#include "report/svg_chart.h"

namespace plumb::report {
namespace {

// After kPageStyle (html_style.h). Colours: A blue, B orange, red rings.
constexpr std::string_view kReportStyle = R"(
table.kv>tbody>tr>th{background:#f6f6f6;font-weight:600}
tr.differs{background:#fff4d6}td.absent{color:#999}
tr.v-regression{background:#fde2e2}tr.v-improvement{background:#e3f4e1}tr.v-too-noisy-to-judge{background:#fff4d6}
.swatch{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:middle}
.swatch.s0{background:#1f6fb4}.swatch.s1{background:#e8710a}
.panels{display:flex;flex-wrap:wrap;gap:8px}svg.panel{width:48%;min-width:380px;height:auto}
.line{fill:none;stroke-width:1.6}.s0{stroke:#1f6fb4;fill:#1f6fb4}.s1{stroke:#e8710a;fill:#e8710a}
polyline.s0,polyline.s1,line.s0,line.s1{fill:none}
.d2{stroke-dasharray:2 2}
circle.reg{fill:none;stroke:#d62728;stroke-width:2.2}
#show-same:not(:checked)~table tr.v-same{display:none}
.err{fill:none;stroke-width:1.2}svg.key .err{stroke:#555}
table.topo-ranks tr.warn{background:#fde2e2}
table.topo-ranks tr.host th{background:#eef3f8;text-align:left}
table.topo-ranks td,table.topo-hosts td{white-space:nowrap}
table.topo-ranks td:last-child{white-space:normal}
details.topo-hosts>summary,details.topo-ranks>summary{cursor:pointer;font-weight:600;margin:8px 0}
)";

// GB/s: two decimals, three significant digits below 1 (small messages).
std::string fixed(double v) {
  if (std::isnan(v)) return "—";
  return std::abs(v) >= 1 || v == 0 ? fmt::format("{:.2f}", v) : fmt::format("{:.3g}", v);
}
// µs: whole microseconds from 1 ms up, never an exponent.
std::string micros(double v) {
  if (std::isnan(v)) return "—";
  return v >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
}
std::string percent_cell(double change) {
  return std::isnan(change) ? "—" : fmt::format("{:+.1f}%", change * 100);
}

void append_head(const baseline::Record& a, const baseline::Record* b, fmt::memory_buffer& out) {
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>plumb report · ");
  append_escaped(out, baseline_name('A', a));
  if (b != nullptr) {
    put(out, " vs ");
    append_escaped(out, baseline_name('B', *b));
  }
  put(out, "</title><style>");
  put(out, kPageStyle);
  put(out, kReportStyle);
  put(out, "</style></head><body>\n");
}

void append_baseline_line(char letter, int colour, const baseline::Record& r,
                          fmt::memory_buffer& out) {
  fmt::format_to(std::back_inserter(out), "<li><span class=\"swatch s{}\"></span><b>", colour);
  append_escaped(out, baseline_name(letter, r));
  put(out, "</b> · ");
  append_escaped(out, r.source);
  fmt::format_to(std::back_inserter(out), " · {} host(s): ", r.hosts.size());
  append_escaped(out, join(r.hosts, ", "));
  fmt::format_to(std::back_inserter(out), " · {} result row(s)</li>", r.rows.size());
}

void append_verdict(const baseline::Diff& d, fmt::memory_buffer& out) {
  const int n = d.regressions();
  fmt::format_to(std::back_inserter(out),
                 "<p class=\"{}\"><b>{} regression{}</b> of B against A: mean busbw of the "
                 "slowest group over the sizes ≥ 1 MiB lower by more than {:.4g}% and beyond "
                 "the runs' own spread, or halved whatever the spread; {} single size(s) "
                 "beyond their own noise.</p>",
                 n > 0 ? "warning" : "ok", n, n == 1 ? "" : "s", d.threshold * 100,
                 d.row_regressions());
  if (n == 0 && d.too_noisy() > 0) {  // plumb diff's exit status 3
    put(out, "<p class=\"warning\"><b>Too noisy to judge</b>: ");
    append_escaped(out, d.too_noisy_advice());
    put(out, "</p>");
  }
  if (const std::string w = d.attribution_warning(); !w.empty()) {
    put(out, "<p class=\"warning\">");
    append_escaped(out, w);
    put(out, "</p>");
  }
}

void append_header(const baseline::Record& a, const baseline::Record* b, const baseline::Diff* diff,
                   fmt::memory_buffer& out) {
  put(out, "<header><h1>plumb report</h1><ul class=\"baselines\">");
  append_baseline_line('A', 0, a, out);
  if (b != nullptr) append_baseline_line('B', 1, *b, out);
  put(out, "</ul>");
  if (diff != nullptr) append_verdict(*diff, out);
  put(out,
      "<nav><a href=\"#summary\">Summary</a><a href=\"#charts\">Charts</a>"
      "<a href=\"#results\">Results</a>");
  if (diff != nullptr) put(out, "<a href=\"#diff\">Diff</a><a href=\"#variables\">Variables</a>");
  put(out,
      "<a href=\"#run\">Run</a><a href=\"#topology\">Topology</a>"
      "<a href=\"#environment\">Environment</a></nav></header>\n");
}

using SummaryKey = std::pair<std::string, std::string>;

std::map<SummaryKey, comm::Summary> summaries_of(const baseline::Record& r,
                                                 std::vector<SummaryKey>& order) {
  std::map<SummaryKey, comm::Summary> out;
  for (comm::Summary& s : comm::summarize(r.rows)) {
    SummaryKey key{s.layer, s.collective};
    if (out.emplace(key, std::move(s)).second &&
        std::find(order.begin(), order.end(), key) == order.end()) {
      order.push_back(key);
    }
  }
  return out;
}

double average_of(const std::map<SummaryKey, comm::Summary>& m, const SummaryKey& key) {
  const auto it = m.find(key);
  if (it == m.end() || it->second.sizes == 0) return std::nan("");
  return it->second.avg_busbw_gbps;
}

// The average busbw as every output writes it (report/comm_summary_text.h); "—" when none.
std::string average(double v) { return std::isnan(v) ? "—" : average_busbw_text(v); }

void append_summary(const baseline::Record& a, const baseline::Record* b, fmt::memory_buffer& out) {
  std::vector<SummaryKey> order;
  const auto sa = summaries_of(a, order);
  const auto sb = b != nullptr ? summaries_of(*b, order) : std::map<SummaryKey, comm::Summary>{};
  put(out,
      "<section id=\"summary\"><h2>Summary</h2><p class=\"note\">Average busbw (GB/s) over "
      "the requested sizes ≥ 1 MiB: each group's mean, then the mean over the layer's groups "
      "(as the console, plumb show, the JSON summary and plumb diff give it).</p>"
      "<table class=\"rows\"><tr><th>layer</th><th>collective</th><th>A</th>");
  put(out, b != nullptr ? "<th>B</th><th>change</th></tr>" : "</tr>");
  for (const SummaryKey& key : order) {
    const double va = average_of(sa, key);
    put(out, "<tr><td>");
    append_escaped(out, key.first);
    put(out, "</td><td>");
    append_escaped(out, key.second);
    fmt::format_to(std::back_inserter(out), "</td><td class=\"num\">{}</td>", average(va));
    if (b != nullptr) {
      const double vb = average_of(sb, key);
      fmt::format_to(std::back_inserter(out), "<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                     average(vb), percent_cell(va > 0 ? (vb - va) / va : std::nan("")));
    }
    put(out, "</tr>");
  }
  put(out, "</table></section>\n");
}

std::string verdict_class(baseline::Verdict v) {
  std::string name(baseline::verdict_name(v));
  for (char& c : name) c = c == ' ' ? '-' : static_cast<char>(std::tolower(c));
  return name;
}

void append_diff_row(const baseline::RowDiff& r, fmt::memory_buffer& out) {
  fmt::format_to(std::back_inserter(out), "<tr class=\"v-{}\"><td>", verdict_class(r.verdict));
  append_escaped(out, r.layer);
  put(out, "</td><td>");
  append_escaped(out, r.collective);
  put(out, "</td><td>");
  append_escaped(out, r.dtype);
  fmt::format_to(std::back_inserter(out),
                 "</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                 "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                 "<td class=\"num\">{}</td><td class=\"num\">{:.1f}%</td><td>{}</td></tr>",
                 size_label(static_cast<double>(r.bytes)), fixed(r.busbw_a), fixed(r.busbw_b),
                 percent_cell(r.busbw_change), micros(r.p99_a), micros(r.p99_b),
                 percent_cell(r.p99_change), r.noise * 100, baseline::verdict_name(r.verdict));
}

constexpr std::string_view kDiffHeader =
    "<table class=\"rows\"><tr><th>layer</th><th>collective</th><th>dtype</th><th>size</th>"
    "<th>busbw A</th><th>busbw B</th><th>change</th><th>p99 A (µs)</th><th>p99 B (µs)</th>"
    "<th>change</th><th>noise</th><th>verdict</th></tr>";

void append_group_regressions(const baseline::Diff& d, fmt::memory_buffer& out) {
  put(out, "<table class=\"rows\"><tr><th>layer</th><th>collective</th><th>dtype</th>"
           "<th>sizes averaged</th><th>mean busbw change</th><th>noise</th></tr>");
  for (const baseline::GroupDiff& g : d.groups) {
    if (g.verdict != baseline::Verdict::kRegression) continue;
    put(out, "<tr class=\"regression\"><td>");
    append_escaped(out, g.layer);
    put(out, "</td><td>");
    append_escaped(out, g.collective);
    put(out, "</td><td>");
    append_escaped(out, g.dtype);
    fmt::format_to(std::back_inserter(out), "</td><td>{}</td><td>{:+.1f}%</td><td>{:.0f}%</td></tr>",
                   g.sizes, 100 * g.change, 100 * g.noise);
  }
  put(out, "</table>");
}

void append_regressions(const baseline::Diff& d, fmt::memory_buffer& out) {
  put(out, "<h3>Regressions</h3>");
  if (d.regressions() == 0 && d.row_regressions() == 0) {
    return put(out, "<p class=\"note\">None.</p>");
  }
  if (d.regressions() > 0) append_group_regressions(d, out);
  if (d.row_regressions() == 0) return;
  put(out, kDiffHeader);
  for (const baseline::RowDiff& r : d.rows) {
    if (r.verdict == baseline::Verdict::kRegression) append_diff_row(r, out);
  }
  put(out, "</table>");
}

void append_diff(const baseline::Diff& d, fmt::memory_buffer& out) {
  size_t same = 0;
  for (const baseline::RowDiff& r : d.rows) same += r.verdict == baseline::Verdict::kSame;
  put(out,
      "<section id=\"diff\"><h2>Diff</h2><p class=\"note\">Per layer, collective, data "
      "type and requested size, the slowest group of each run (lowest busbw, highest p99); "
      "noise is the change the runs' own spread accounts for.</p>");
  append_regressions(d, out);
  fmt::format_to(std::back_inserter(out),
                 "<h3>All rows</h3><input type=\"checkbox\" id=\"show-same\"><label "
                 "for=\"show-same\"> also show the {} row(s) within the threshold</label>",
                 same);
  put(out, kDiffHeader);
  for (const baseline::RowDiff& r : d.rows) append_diff_row(r, out);
  put(out, "</table></section>\n");
}

void append_variables(const baseline::Diff& d, fmt::memory_buffer& out) {
  put(out, "<section id=\"variables\"><h2>Variables</h2>");
  if (const std::string w = d.attribution_warning(); !w.empty()) {
    put(out, "<p class=\"warning\">");
    append_escaped(out, w);
    put(out, "</p>");
  }
  put(out, "<p class=\"note\">Context: ");
  append_escaped(out, baseline::context_headline(d.variables, d.unrecorded));
  put(out, ".</p>");
  if (d.variables.empty()) {
    put(out, "</section>\n");
    return;
  }
  put(out, "<table class=\"rows\"><tr><th>kind</th><th>name</th><th>A</th><th>B</th></tr>");
  for (const baseline::VariableDiff& v : d.variables) {
    put(out, "<tr>");
    for (const std::string* cell : {&v.kind, &v.name, &v.a, &v.b}) {
      put(out, "<td>");
      append_escaped(out, *cell);
      put(out, "</td>");
    }
    put(out, "</tr>");
  }
  put(out, "</table></section>\n");
}

// "3 rounds" from the record's plumb.comm/1 settings.rounds; "1 round" when absent (imported).
int rounds_of(const baseline::Record& r) {
  const nlohmann::json* settings =
      r.comm.is_object() && r.comm.contains("settings") ? &r.comm["settings"] : nullptr;
  if (settings == nullptr || !settings->is_object() || !settings->contains("rounds") ||
      !(*settings)["rounds"].is_number_integer()) {
    return 1;
  }
  return std::max(1, (*settings)["rounds"].get<int>());
}

std::string rounds_text(char letter, const baseline::Record& r) {
  const int n = rounds_of(r);
  return fmt::format("{} measured in {} round{}", letter, n, n == 1 ? "" : "s");
}

using PointKey = std::tuple<std::string, std::string, std::string, uint64_t>;

// B's points by (layer, collective, dtype, size).
std::map<PointKey, const CurvePoint*> points_of_b(const std::vector<ChartData>& charts) {
  std::map<PointKey, const CurvePoint*> out;
  for (const ChartData& c : charts) {
    for (const Curve& curve : c.b) {
      for (const CurvePoint& p : curve.points) {
        out.emplace(PointKey{c.layer, c.collective, curve.dtype, p.bytes}, &p);
      }
    }
  }
  return out;
}

void append_result_cells(const CurvePoint* p, bool spread, fmt::memory_buffer& out) {
  if (p == nullptr) {
    put(out, spread ? "<td class=\"absent\">—</td><td class=\"absent\">—</td>"
                    : "<td class=\"absent\">—</td>");
    return;
  }
  put(out, "<td class=\"num\" title=\"slowest group: ");
  append_escaped(out, p->busbw_group);
  fmt::format_to(std::back_inserter(out), "\">{}</td>", fixed(p->busbw_gbps));
  if (spread) {
    fmt::format_to(std::back_inserter(out), "<td class=\"num spread\">{}</td>",
                   spread_text(p->busbw_spread));
  }
}

void append_result_row(const ChartData& c, const std::string& dtype, const CurvePoint& a,
                       const CurvePoint* b, bool two, fmt::memory_buffer& out) {
  put(out, "<tr><td>");
  append_escaped(out, c.layer);
  put(out, "</td><td>");
  append_escaped(out, c.collective);
  put(out, "</td><td>");
  append_escaped(out, dtype);
  fmt::format_to(std::back_inserter(out), "</td><td class=\"num\">{}</td>",
                 size_label(static_cast<double>(a.bytes)));
  append_result_cells(&a, true, out);
  if (two) append_result_cells(b, true, out);
  fmt::format_to(std::back_inserter(out), "<td class=\"num\">{}</td>", micros(a.p99_us));
  if (two) {
    fmt::format_to(std::back_inserter(out), "<td class=\"num\">{}</td>",
                   b != nullptr ? micros(b->p99_us) : "—");
  } else {
    put(out, "<td>");
    append_escaped(out, a.busbw_group);
    put(out, "</td>");
  }
  put(out, "</tr>");
}

constexpr std::string_view kResultsNote =
    "<p class=\"note\">Per layer, collective, data type and requested size, the slowest group "
    "(lowest busbw, highest p99), as the charts draw it. <b>spread</b>: busbw's spread over the "
    "rounds of the sweep — the rounds' median absolute deviation from their median, relative to "
    "it (the row holds the median round; plumb comm --rounds, docs/comm.md); the charts draw it "
    "as an error bar of ± that spread. — when measured once. ";

void append_results(const std::vector<ChartData>& charts, const baseline::Record& a,
                    const baseline::Record* b, fmt::memory_buffer& out) {
  put(out, "<section id=\"results\"><h2>Results</h2>");
  put(out, kResultsNote);
  append_escaped(out, rounds_text('A', a));
  if (b != nullptr) append_escaped(out, " · " + rounds_text('B', *b));
  put(out, ".</p><table class=\"rows results\"><tr><th>layer</th><th>collective</th>"
           "<th>dtype</th><th>size</th>");
  put(out, b != nullptr ? "<th>busbw A (GB/s)</th><th>spread A</th><th>busbw B (GB/s)</th>"
                          "<th>spread B</th><th>p99 A (µs)</th><th>p99 B (µs)</th></tr>"
                        : "<th>busbw (GB/s)</th><th>spread</th><th>p99 (µs)</th>"
                          "<th>slowest group</th></tr>");
  const auto in_b = points_of_b(charts);
  for (const ChartData& c : charts) {
    for (const Curve& curve : c.a) {
      for (const CurvePoint& p : curve.points) {
        const auto it = in_b.find(PointKey{c.layer, c.collective, curve.dtype, p.bytes});
        append_result_row(c, curve.dtype, p, it == in_b.end() ? nullptr : it->second,
                          b != nullptr, out);
      }
    }
  }
  put(out, "</table></section>\n");
}

}  // namespace

std::string_view report_style() { return kReportStyle; }

void append_comm_sections(const baseline::Record& a, const baseline::Record* b,
                          const baseline::Diff* diff, fmt::memory_buffer& out) {
  append_summary(a, b, out);
  const std::vector<ChartData> charts = chart_data(a.rows, b != nullptr ? &b->rows : nullptr);
  append_charts(charts, diff, out);
  append_results(charts, a, b, out);
  if (diff != nullptr) {
    append_diff(*diff, out);
    append_variables(*diff, out);
  }
}

void append_diff_verdict(const baseline::Diff& diff, fmt::memory_buffer& out) {
  append_verdict(diff, out);
}

void render_html_report(const baseline::Record& a, const baseline::Record* b,
                        const baseline::Diff* diff, fmt::memory_buffer& out) {
  append_head(a, b, out);
  append_header(a, b, diff, out);
  append_comm_sections(a, b, diff, out);
  append_context_sections(a, b, out);
  out.append(kPageEnd.data(), kPageEnd.data() + kPageEnd.size());
}

void write_html_report(const baseline::Record& a, const baseline::Record* b,
                       const baseline::Diff* diff, std::ostream& out) {
  fmt::memory_buffer page;
  render_html_report(a, b, diff, page);
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
}

}  // namespace plumb::report
