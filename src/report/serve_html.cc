#include "report/serve_html.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "report/html_escape.h"
#include "report/html_out.h"
#include "report/html_style.h"
#include "report/serve_pareto_html.h"
#include "report/serve_reporter.h"
#include "report/svg_chart.h"
#include "serve/measure.h"
#include "serve/pareto.h"

namespace plumb::report {
namespace {

using serve::Distribution;
using serve::ServeRun;
using serve::ServeSummary;

// After kPageStyle (html_style.h): k0 is A, k1 B (as the comm report's s0/s1); the Pareto chart's
// k2, k4, k5 (met, missed, a sweep's run) as serve_pareto_html has them.
constexpr std::string_view kServeStyle = R"(
svg.lchart{width:100%;max-width:1100px;height:auto;display:block}
.k0{stroke:#1f6fb4;fill:#1f6fb4}.k1{stroke:#e8710a;fill:#e8710a}.k2{stroke:#2ca02c;fill:#2ca02c}
.k4{stroke:#d62728;fill:#d62728}.k5{stroke:#8c8c8c;fill:#8c8c8c}
.line{fill:none;stroke-width:1.6}td.front{font-weight:600}
.pair{display:flex;flex-wrap:wrap;gap:24px}.pair>div{flex:1 1 520px;min-width:0;overflow-x:auto}
tr.behind,tr.failed{background:#fde2e2}
.swatch{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:middle}
.swatch.s0{background:#1f6fb4}.swatch.s1{background:#e8710a}
)";
constexpr double kServeChartHeight = 300;

std::string ms(double v) { return fmt::format("{:.2f}", v); }
// A percentile of a distribution that measured nothing (no request completed) is "-", never 0.
std::string ms(const Distribution& d, double v) { return d.count == 0 ? "-" : ms(v); }

// "0", "3 (connect 2, timeout 1)": as the console.
std::string errors_cell(const ServeSummary& s) {
  if (s.errors == 0) return "0";
  std::vector<std::string> kinds;
  for (const auto& [kind, n] : s.errors_by_kind) kinds.push_back(fmt::format("{} {}", kind, n));
  std::string joined;
  for (const std::string& k : kinds) joined += (joined.empty() ? "" : ", ") + k;
  return fmt::format("{} ({})", s.errors, joined);
}

std::string keep_up_text(const ServeSummary& s) {
  return s.client_kept_up ? "kept up"
                          : fmt::format("behind: lag p99 {:.3g} ms", s.client_lag_ms.p99);
}

// ---- the tables --------------------------------------------------------------------------------

void append_setup(const serve::ServeResult& r, fmt::memory_buffer& out) {
  const serve::ServeSetup& s = r.setup;
  put(out, "<table class=\"rows serve-setup\">");
  const std::pair<const char*, std::string> rows[] = {
      {"URL", s.url},
      {"API", s.api},
      {"model", s.model.empty() ? "-" : s.model},
      {"arrival", s.arrival},
      {"dataset", s.dataset},
      {"seed", std::to_string(s.seed)},
      {"cards", std::to_string(s.cards)},
      {"SLO (goodput)", s.slo.empty() ? "none: no goodput" : serve::slo_text(s.slo)},
      {"runs", std::to_string(r.runs.size())},
  };
  for (const auto& [name, value] : rows) {
    put(out, "<tr><th>");
    put(out, name);
    put(out, "</th>");
    cell(out, value);
    put(out, "</tr>");
  }
  put(out, "</table>");
}

constexpr const char* kRunHeads[] = {
    "load",     "req/s",    "out tok/s", "goodput req/s", "TTFT p50", "TTFT p99",
    "TPOT p50", "TPOT p99", "ITL p50",   "ITL p99",       "E2E p50",  "E2E p99",
    "dispatch delay p99", "requests", "errors", "keep-up"};

void append_run_row(const ServeRun& run, bool goodput, fmt::memory_buffer& out) {
  const ServeSummary& s = run.summary;
  put(out, !s.client_kept_up ? "<tr class=\"behind\">" : s.errors > 0 ? "<tr class=\"failed\">" : "<tr>");
  cell(out, serve_run_label(run));
  cell(out, fmt::format("{:.2f}", s.requests_per_second), "num");
  cell(out, fmt::format("{:.1f}", s.output_tokens_per_second), "num");
  cell(out, goodput ? fmt::format("{:.2f}", s.goodput_requests_per_second) : "-", "num");
  for (const Distribution* d : {&s.ttft_ms, &s.tpot_ms, &s.itl_ms, &s.e2e_ms}) {
    cell(out, ms(*d, d->p50), "num");
    cell(out, ms(*d, d->p99), "num");
  }
  cell(out, ms(s.dispatch_delay_ms, s.dispatch_delay_ms.p99), "num");
  cell(out, std::to_string(s.completed + s.errors), "num");
  cell(out, errors_cell(s), s.errors > 0 ? "num warning" : "num");
  cell(out, keep_up_text(s));
  put(out, "</tr>");
}

void append_runs(const serve::ServeResult& r, fmt::memory_buffer& out) {
  put(out, "<table class=\"rows serve-runs\"><tr>");
  for (const char* h : kRunHeads) putf(out, "<th>{}</th>", h);
  put(out, "</tr>");
  for (const ServeRun& run : r.runs) append_run_row(run, !r.setup.slo.empty(), out);
  put(out, "</table><p class=\"note\">Latencies in ms from each request's scheduled time; "
           "dispatch delay = sent − scheduled (the client's own delay is the keep-up verdict).</p>");
}

// ---- the charts --------------------------------------------------------------------------------

// The load a run is drawn at: its rate for an open loop, else its concurrency; NaN for an
// unbounded rate or a trace (not drawn).
double load_of(const ServeRun& run) {
  if (run.rate > 0) return std::isfinite(run.rate) ? run.rate : NAN;
  return run.concurrency > 0 ? run.concurrency : NAN;
}

bool open_loop(const NamedServe& n) {
  for (const ServeRun& run : n.result->runs) {
    if (run.rate > 0) return true;
  }
  return false;
}

struct ChartSpec {
  const char* key;    // data-chart
  const char* title;  // the caption
};

// One figure per latency: p50 solid, p99 dashed, A and B in their colours.
using Figure = double (*)(const ServeSummary&, bool p99);
// A run whose distribution measured nothing has no point (NaN), not a point at 0 ms.
double quantile_ms(const Distribution& d, bool p99) {
  if (d.count == 0) return std::numeric_limits<double>::quiet_NaN();
  return p99 ? d.p99 : d.p50;
}
double ttft(const ServeSummary& s, bool p99) { return quantile_ms(s.ttft_ms, p99); }
double tpot(const ServeSummary& s, bool p99) { return quantile_ms(s.tpot_ms, p99); }
double itl(const ServeSummary& s, bool p99) { return quantile_ms(s.itl_ms, p99); }
double e2e(const ServeSummary& s, bool p99) { return quantile_ms(s.e2e_ms, p99); }
double out_tokens(const ServeSummary& s, bool) { return s.output_tokens_per_second; }
double requests(const ServeSummary& s, bool) { return s.requests_per_second; }
double goodput(const ServeSummary& s, bool) { return s.goodput_requests_per_second; }

struct Line {
  const char* name;  // "p50", "output tok/s"
  Figure figure;
  bool p99;
  SeriesStyle style;
};

struct ChartKind {
  ChartSpec spec;
  std::vector<Line> lines;
};

const std::vector<ChartKind>& chart_kinds() {
  static const std::vector<ChartKind> kKinds = {
      {{"ttft", "TTFT (ms)"}, {{"p50", ttft, false, SeriesStyle::kLine}, {"p99", ttft, true, SeriesStyle::kDashedLine}}},
      {{"tpot", "TPOT (ms)"}, {{"p50", tpot, false, SeriesStyle::kLine}, {"p99", tpot, true, SeriesStyle::kDashedLine}}},
      {{"itl", "ITL (ms)"}, {{"p50", itl, false, SeriesStyle::kLine}, {"p99", itl, true, SeriesStyle::kDashedLine}}},
      {{"e2e", "E2E latency (ms)"}, {{"p50", e2e, false, SeriesStyle::kLine}, {"p99", e2e, true, SeriesStyle::kDashedLine}}},
      {{"throughput", "output tokens/s"}, {{"output tok/s", out_tokens, false, SeriesStyle::kLine}}},
      {{"requests", "requests/s"},
       {{"req/s", requests, false, SeriesStyle::kLine},
        {"goodput req/s", goodput, false, SeriesStyle::kDashedLine}}},
  };
  return kKinds;
}

// A line and its hoverable points for one record.
void add_series(const NamedServe& n, int colour, const ChartKind& kind, const Line& line,
                LinearChart& c) {
  if (line.figure == goodput && n.result->setup.slo.empty()) return;  // no SLO: no goodput
  std::vector<std::pair<double, const ServeRun*>> at;
  for (const ServeRun& run : n.result->runs) {
    if (!std::isnan(load_of(run))) at.emplace_back(load_of(run), &run);
  }
  std::stable_sort(at.begin(), at.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  LinearSeries s{fmt::format("{} {}", n.name, line.name), colour, line.style, {}, {}, {}};
  LinearSeries points{"", colour, SeriesStyle::kPoints, {}, {}, {}};
  for (const auto& [x, run] : at) {
    const double y = line.figure(run->summary, line.p99);
    if (std::isnan(y)) continue;
    s.x.push_back(x);
    s.y.push_back(y);
    points.x.push_back(x);
    points.y.push_back(y);
    points.tips.push_back(fmt::format("{}\n{}\n{} {}: {:.4g}", n.name, serve_run_label(*run),
                                      kind.spec.title, line.name, y));
  }
  if (s.x.empty()) return;
  c.series.push_back(std::move(s));
  c.series.push_back(std::move(points));
}

void append_chart(const NamedServe& a, const NamedServe& b, const ChartKind& kind,
                  fmt::memory_buffer& out) {
  LinearChart c;
  c.title = kind.spec.title;
  const bool rate = open_loop(a) || (b.result != nullptr && open_loop(b));
  c.x_title = rate ? "rate (requests/s)" : "concurrency";
  c.empty_note = "no run at a finite concurrency or rate: nothing to draw";
  c.y_bytes = false;
  c.height = kServeChartHeight;
  for (const Line& line : kind.lines) {
    add_series(a, 0, kind, line, c);
    if (b.result != nullptr) add_series(b, 1, kind, line, c);
  }
  putf(out, "<figure class=\"chart\" data-chart=\"{}\"><figcaption>", kind.spec.key);
  append_escaped(out, kind.spec.title);
  put(out, " against the load</figcaption>");
  append_linear_legend(c, out);
  draw_linear_chart(c, out);
  put(out, "</figure>");
}

// ---- the page ----------------------------------------------------------------------------------

std::vector<NamedServe> records(const NamedServe& a, const NamedServe& b) {
  std::vector<NamedServe> all = {a};
  if (b.result != nullptr) all.push_back(b);
  return all;
}

void append_head(const NamedServe& a, const NamedServe& b, fmt::memory_buffer& out) {
  put(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
           "<title>plumb report · serving · ");
  append_escaped(out, a.name);
  if (b.result != nullptr) {
    put(out, " vs ");
    append_escaped(out, b.name);
  }
  put(out, "</title><style>");
  put(out, kPageStyle);
  put(out, kServeStyle);
  put(out, "</style></head><body>\n<header><h1>plumb report · serving</h1><ul class=\"baselines\">");
  int colour = 0;
  for (const NamedServe& n : records(a, b)) {
    putf(out, "<li><span class=\"swatch s{}\"></span><b>", colour++);
    append_escaped(out, n.name);
    putf(out, "</b> · {} run(s) · ", n.result->runs.size());
    append_escaped(out, n.result->setup.model.empty() ? n.result->setup.url
                                                      : n.result->setup.model + " at " + n.result->setup.url);
    put(out, "</li>");
  }
  put(out, "</ul><nav><a href=\"#setup\">Setup and runs</a><a href=\"#charts\">Against the "
           "load</a><a href=\"#pareto\">Pareto</a></nav></header>\n");
}

// Each record's block side by side, under its name.
template <void (*Block)(const serve::ServeResult&, fmt::memory_buffer&)>
void side_by_side(const NamedServe& a, const NamedServe& b, fmt::memory_buffer& out) {
  put(out, "<div class=\"pair\">");
  for (const NamedServe& n : records(a, b)) {
    put(out, "<div><h3>");
    append_escaped(out, n.name);
    put(out, "</h3>");
    Block(*n.result, out);
    put(out, "</div>");
  }
  put(out, "</div>");
}

// The Pareto section of each record; B's ids are suffixed so that the page keeps one of each.
void append_paretos(const NamedServe& a, const NamedServe& b, fmt::memory_buffer& out) {
  bool first = true;
  for (const NamedServe& n : records(a, b)) {
    fmt::memory_buffer one;
    append_pareto_section(serve::pareto_points(*n.result), one);
    std::string text = fmt::to_string(one);
    if (b.result != nullptr) {
      const std::string heading = "<h2>";
      const size_t at = text.find(heading);
      fmt::memory_buffer escaped;
      append_escaped(escaped, n.name);
      if (at != std::string::npos) text.insert(at + heading.size(), fmt::to_string(escaped) + " · ");
    }
    if (!first) {
      const std::string id = "<section id=\"pareto\">";
      if (text.rfind(id, 0) == 0) text.replace(0, id.size(), "<section id=\"pareto-b\">");
    }
    put(out, text);
    first = false;
  }
}

}  // namespace

const char* serve_html_style() { return kServeStyle.data(); }

void append_serve_tables(const serve::ServeResult& result, fmt::memory_buffer& out) {
  append_setup(result, out);
  append_runs(result, out);
}

void append_serve_charts(const NamedServe& a, const NamedServe& b, fmt::memory_buffer& out) {
  for (const ChartKind& kind : chart_kinds()) append_chart(a, b, kind, out);
}

void render_serve_html(const NamedServe& a, const NamedServe& b, fmt::memory_buffer& out) {
  append_head(a, b, out);
  put(out, "<section id=\"setup\"><h2>Setup and runs</h2>");
  side_by_side<append_serve_tables>(a, b, out);
  put(out, "</section>\n<section id=\"charts\"><h2>Latency and throughput against the load</h2>"
           "<p class=\"note\">Solid: p50 (req/s in the requests chart); dashed: p99 (goodput "
           "req/s: the requests meeting the SLO, per second). Hover a point for its figures.</p>");
  append_serve_charts(a, b, out);
  put(out, "</section>\n");
  append_paretos(a, b, out);
  put(out, kPageEnd);
}

void write_serve_html(const NamedServe& a, const NamedServe& b, std::ostream& out) {
  fmt::memory_buffer buffer;
  render_serve_html(a, b, buffer);
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

}  // namespace plumb::report
