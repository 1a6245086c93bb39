// plumb report of a serving record (issue 31, item 6): the setup, a row per run with the figures
// the console and plumb.serve/1 give, the latencies and throughput against the load as inline
// SVG, the Pareto chart; two records side by side and overlaid; self-contained and escaped.
#include "report/serve_html.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "support/serve_record.h"

namespace plumb::report {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string page(const serve::ServeResult& a, const serve::ServeResult* b = nullptr,
                 const std::string& b_name = "baseline 8") {
  fmt::memory_buffer out;
  render_serve_html({"baseline 7", &a}, {b != nullptr ? b_name : "", b}, out);
  return fmt::to_string(out);
}

TEST(ServeHtml, OneRecordHasTheSetupARowPerRunTheChartsAndThePareto) {
  const serve::ServeResult r = test::serve_sweep();
  const std::string html = page(r);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>plumb report · serving · baseline 7</title>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http-equiv"), std::string::npos);
  for (const char* id : {"setup", "charts", "pareto"}) {
    EXPECT_EQ(count(html, std::string("<section id=\"") + id + "\""), 1u) << id;
  }
  EXPECT_NE(html.find("<tr><th>SLO (goodput)</th><td>ttft=2000ms,tpot=100ms</td></tr>"),
            std::string::npos) << html;
  EXPECT_NE(html.find("<tr><th>URL</th><td>http://127.0.0.1:18200</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("<th>TTFT p50</th><th>TTFT p99</th><th>TPOT p50</th><th>TPOT p99</th>"
                      "<th>ITL p50</th><th>ITL p99</th><th>E2E p50</th><th>E2E p99</th>"
                      "<th>dispatch delay p99</th>"),
            std::string::npos);
  EXPECT_EQ(count(html, "<td>kept up</td></tr>"), 3u);
  EXPECT_EQ(count(html, "<tr class=\"failed\"><td>c=16</td>"), 1u);  // two timeouts
  // c=4: TTFT p50 24, p99 33; TPOT p50 5, p99 5.9; dispatch delay p99 0.24.
  EXPECT_NE(html.find("<td class=\"num\">24.00</td><td class=\"num\">33.00</td>"
                      "<td class=\"num\">5.00</td><td class=\"num\">5.90</td>"),
            std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"num\">0.24</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num warning\">2 (timeout 2)</td><td>kept up</td>"),
            std::string::npos);
  for (const char* chart : {"ttft", "tpot", "itl", "e2e", "throughput", "requests"}) {
    EXPECT_EQ(count(html, std::string("data-chart=\"") + chart + "\""), 1u) << chart;
  }
  EXPECT_EQ(count(html, "<svg class=\"lchart\""), 7u);  // six against the load, the Pareto
  EXPECT_NE(html.find("concurrency"), std::string::npos);
  EXPECT_NE(html.find("baseline 7\nc=4\nTTFT (ms) p99: 33"), std::string::npos);
  EXPECT_NE(html.find("Pareto frontier"), std::string::npos);
}

TEST(ServeHtml, TwoRecordsSideBySideAndOverlaidWithNamesEscaped) {
  const serve::ServeResult a = test::serve_sweep();
  const serve::ServeResult b = test::serve_sweep(1.2);
  const std::string html = page(a, &b, "b<&>");
  EXPECT_EQ(html.find("b<&>"), std::string::npos);
  EXPECT_NE(html.find("<h3>b&lt;&amp;&gt;</h3>"), std::string::npos);
  EXPECT_EQ(count(html, "<table class=\"rows serve-runs\">"), 2u);
  EXPECT_EQ(count(html, "<div class=\"pair\">"), 1u);
  EXPECT_NE(html.find("<section id=\"pareto-b\">"), std::string::npos);
  EXPECT_EQ(count(html, "<section id=\"pareto\">"), 1u);
  // B's TPOT p99 at c=4 is 1.2 × 5.9 ms, drawn in B's colour beside A's.
  EXPECT_NE(html.find("b&lt;&amp;&gt;\nc=4\nTPOT (ms) p99: 7.08"), std::string::npos);
  EXPECT_NE(html.find("<title>plumb report · serving · baseline 7 vs b&lt;&amp;&gt;</title>"),
            std::string::npos);
}

// An open loop is drawn against its rate; an unbounded rate has no place on the axis.
TEST(ServeHtml, AnOpenLoopIsDrawnAgainstTheRate) {
  serve::ServeResult r = test::serve_sweep();
  r.setup.slo = {};
  r.runs[0].rate = 2;
  r.runs[1].rate = 8;
  r.runs[2].rate = std::numeric_limits<double>::infinity();
  const std::string html = page(r);
  EXPECT_NE(html.find("rate (requests/s)"), std::string::npos);
  EXPECT_EQ(html.find("requests/s goodput req/s: "), std::string::npos);  // no SLO: no goodput
  EXPECT_NE(html.find("requests/s req/s: "), std::string::npos);
  EXPECT_NE(html.find("<td>r=inf c=16</td>"), std::string::npos);
  EXPECT_NE(html.find("<tr><th>SLO (goodput)</th><td>none: no goodput</td></tr>"),
            std::string::npos);
}

TEST(ServeHtml, ALatencyThatMeasuredNothingIsADashAndNoPointNeverZero) {
  serve::ServeResult r = test::serve_sweep();
  serve::ServeSummary& s = r.runs[1].summary;  // c=4: every request failed
  s.errors += s.completed;
  s.completed = 0;
  for (serve::Distribution* d : {&s.ttft_ms, &s.tpot_ms, &s.itl_ms, &s.e2e_ms}) *d = {};
  const std::string html = page(r);
  EXPECT_NE(html.find("<td>c=4</td>"), std::string::npos);
  std::string dashes;
  for (int i = 0; i < 8; ++i) dashes += "<td class=\"num\">-</td>";  // TTFT..E2E p50, p99
  EXPECT_NE(html.find("<td>c=4</td><td class=\"num\">6.06</td><td class=\"num\">775.8</td>"
                      "<td class=\"num\">6.06</td>" + dashes + "<td class=\"num\">0.24</td>"),
            std::string::npos) << html;
  EXPECT_EQ(html.find("c=4\nTTFT (ms) p99"), std::string::npos);  // no point on the chart
  EXPECT_NE(html.find("baseline 7\nc=4\n"), std::string::npos) << "the run is still in other charts";
}

}  // namespace
}  // namespace plumb::report
