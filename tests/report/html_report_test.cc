// The HTML report: one chart per (layer, collective), log axes, escaping, unknown figures
// skipped, regressions marked, no remote resource, the same bytes for the same input.
#include "report/html_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <regex>
#include <sstream>
#include <string>

#include "baseline/diff.h"
#include "baseline/store.h"
#include "common/json.h"
#include "report/chart_data.h"
#include "report/html_escape.h"
#include "report/svg_chart.h"

namespace plumb::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

comm::Row row(std::string layer, std::string group, std::string coll, uint64_t bytes, double busbw,
              double p99) {
  comm::Row r;
  r.layer = std::move(layer);
  r.group = std::move(group);
  r.group_ranks = 2;
  r.collective = std::move(coll);
  r.dtype = "float32";
  r.op = "sum";
  r.requested_bytes = r.bytes = bytes;
  r.busbw_gbps = busbw;
  r.algbw_gbps = busbw;
  r.time_us = static_cast<double>(bytes) / (busbw * 1e3);
  r.p50_us = p99 / 2;
  r.p99_us = p99;
  r.max_us = p99 * 1.1;
  return r;
}

// layers × collectives × two groups × sizes 1 B .. 1 GiB (×32: 7 sizes).
baseline::Record record(int64_t id, std::string label, double scale,
                        std::vector<std::string> layers = {"node", "spine"},
                        std::vector<std::string> colls = {"allreduce", "allgather", "alltoall"}) {
  baseline::Record r;
  r.id = id;
  r.label = std::move(label);
  r.created = "2026-12-02T10:00:00Z";
  r.source = "plumb baseline";
  r.hosts = {"h0", "h1"};
  for (const auto& layer : layers) {
    for (const auto& coll : colls) {
      for (uint64_t bytes = 1; bytes <= (uint64_t{1} << 30); bytes *= 32) {
        const double bw = scale * std::log2(static_cast<double>(bytes));
        r.rows.push_back(row(layer, layer + "0", coll, bytes, bw, 10.0 * bytes / 1e3 + 5));
        r.rows.push_back(row(layer, layer + "1", coll, bytes, bw * 0.9, 12.0 * bytes / 1e3 + 5));
      }
    }
  }
  return r;
}

std::string render(const baseline::Record& a, const baseline::Record* b = nullptr,
                   const baseline::Diff* d = nullptr) {
  std::ostringstream out;
  write_html_report(a, b, d, out);
  return out.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(HtmlReport, OneChartPerLayerAndCollective) {
  const baseline::Record a = record(1, "before", 1.0);
  const baseline::Record b = record(2, "after", 1.1);
  const std::string html = render(a, &b);
  EXPECT_EQ(count(html, "class=\"chart\""), 6u);
  for (const char* layer : {"node", "spine"}) {
    for (const char* coll : {"allreduce", "allgather", "alltoall"}) {
      EXPECT_EQ(count(html, fmt::format("data-layer=\"{}\" data-collective=\"{}\"", layer, coll)),
                1u);
    }
  }
  // Two panels per chart, and two series (A, B) in each.
  EXPECT_EQ(count(html, "<svg class=\"panel\""), 12u);
  EXPECT_EQ(count(html, "<polyline class=\"line s0"), 12u);
  EXPECT_EQ(count(html, "<polyline class=\"line s1"), 12u);
  EXPECT_NE(html.find("A: id 1 · before · 2026-12-02T10:00:00Z"), std::string::npos);
  EXPECT_NE(html.find("B: id 2 · after · 2026-12-02T10:00:00Z"), std::string::npos);
}

TEST(HtmlReport, SlowestGroupPerSize) {
  std::vector<comm::Row> rows = {
      row("node", "g0", "allreduce", 1024, 5, 100), row("node", "g1", "allreduce", 1024, 3, 80),
      row("node", "g2", "allreduce", 1024, 4, 120), row("node", "g0", "allreduce", 64, 1, kNaN)};
  const std::vector<ChartData> charts = chart_data(rows, nullptr);
  ASSERT_EQ(charts.size(), 1u);
  ASSERT_EQ(charts[0].a.size(), 1u);
  const std::vector<CurvePoint>& points = charts[0].a[0].points;
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].bytes, 64u);
  EXPECT_TRUE(std::isnan(points[0].p99_us));
  EXPECT_EQ(points[1].bytes, 1024u);
  EXPECT_EQ(points[1].busbw_gbps, 3);
  EXPECT_EQ(points[1].busbw_group, "g1");
  EXPECT_EQ(points[1].p99_us, 120);
  EXPECT_EQ(points[1].p99_group, "g2");
  EXPECT_EQ(points[1].groups, 3);
  EXPECT_TRUE(charts[0].b.empty());
}

TEST(HtmlReport, LogAxisTicks) {
  EXPECT_EQ(size_label(512), "512");
  EXPECT_EQ(size_label(1024), "1K");
  EXPECT_EQ(size_label(32768), "32K");
  EXPECT_EQ(size_label(1 << 20), "1M");
  EXPECT_EQ(size_label(double(uint64_t{1} << 30)), "1G");
  EXPECT_EQ(time_label(0.5), "0.5 µs");
  EXPECT_EQ(time_label(100), "100 µs");
  EXPECT_EQ(time_label(1000), "1 ms");
  EXPECT_EQ(time_label(1e6), "1 s");
  // 8 B .. 1 GiB: 27 exponents, every fifth: 32, 1K, 32K, 1M, 32M, 1G.
  std::vector<std::string> labels;
  for (double t : log2_ticks(8, double(uint64_t{1} << 30))) labels.push_back(size_label(t));
  EXPECT_EQ(labels, (std::vector<std::string>{"32", "1K", "32K", "1M", "32M", "1G"}));
  // A narrow range: every power of 2.
  EXPECT_EQ(log2_ticks(1024, 8192), (std::vector<double>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(log10_ticks(3, 4000), (std::vector<double>{1, 10, 100, 1000, 10000}));
  EXPECT_EQ(linear_ticks(9), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(linear_ticks(0).size(), 6u);  // nothing measured: 0 .. 1
  EXPECT_EQ(linear_ticks(42).back(), 50);

  const std::string html = render(record(1, "x", 1.0));
  for (const char* tick : {">1K</text>", ">1M</text>", ">1G</text>", ">1 ms</text>"}) {
    EXPECT_NE(html.find(tick), std::string::npos) << tick;
  }
}

TEST(HtmlReport, EscapesEveryString) {
  EXPECT_EQ(html_escape("<a href='x'>\"&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;");
  baseline::Record a = record(1, "<script>alert(1)</script>", 1.0, {"no<de"}, {"all\"reduce"});
  a.hosts = {"<img src=x>"};
  a.env = {{"schema", "plumb.env/1"},
           {"versions", {{"nccl", "<b>2.18</b>"}}},
           {"env", {{"NCCL_ALGO", "</td><script>"}}}};
  a.topo = {{"schema", "plumb.topo/1"}, {"warnings", {"<bad binding>"}}};
  const std::string html = render(a);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>2.18"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("data-layer=\"no&lt;de\" data-collective=\"all&quot;reduce\""),
            std::string::npos);
  EXPECT_NE(html.find("&lt;bad binding&gt;"), std::string::npos);
}

TEST(HtmlReport, UnknownP99IsSkipped) {
  // An imported log: no p99 at all in one chart, and one size without it in the other.
  baseline::Record a = record(1, "imported", 1.0, {"world"}, {"allreduce", "alltoall"});
  int alltoall_rows = 0;
  for (comm::Row& r : a.rows) {
    if (r.collective == "allreduce") r.p99_us = r.p50_us = r.max_us = kNaN;
    if (r.collective == "alltoall" && r.requested_bytes == 1024) r.p99_us = kNaN;
    alltoall_rows += r.collective == "alltoall";
  }
  const std::string html = render(a);
  EXPECT_FALSE(std::regex_search(html, std::regex("\\bnan\\b|\\binf\\b", std::regex::icase)));
  EXPECT_EQ(count(html, "no p99 latency (imported logs have none)"), 1u);
  // alltoall: 7 sizes; the p99 panel has 6 points, the busbw panel 7.
  const size_t chart = html.find("data-collective=\"alltoall\"");
  const size_t p99_panel = html.find("aria-label=\"p99", chart);
  const std::string busbw_part = html.substr(chart, p99_panel - chart);
  const std::string p99_part = html.substr(p99_panel, html.find("</svg>", p99_panel) - p99_panel);
  EXPECT_EQ(alltoall_rows, 14);
  EXPECT_EQ(count(busbw_part, "<title>"), 7u);
  EXPECT_EQ(count(p99_part, "<title>"), 6u);
}

TEST(HtmlReport, RegressionMarked) {
  const baseline::Record a = record(1, "before", 1.0, {"node"}, {"allreduce"});
  const baseline::Record b = record(2, "after", 1.0, {"node"}, {"allreduce"});
  baseline::Diff d;
  d.a = {1, "before", a.created, a.source};
  d.b = {2, "after", b.created, b.source};
  d.threshold = 0.1;
  d.strict = true;  // the single size's regression counts
  baseline::RowDiff same{"node", "allreduce", "float32", 1024, 9,    9,
                         0,      15,          15,        0,    0.01, baseline::Verdict::kSame};
  baseline::RowDiff reg{"node", "allreduce", "float32", 32768,
                        13.5,   9,           -1.0 / 3,  330,
                        331,    0.003,       0.02,      baseline::Verdict::kRegression};
  d.rows = {same, reg};
  d.variables = {{"version", "nccl", "2.18.3", "2.19.1"}, {"setting", "NCCL_ALGO", "Ring", "Tree"}};
  const std::string html = render(a, &b, &d);
  // One ring in the busbw panel (p99 did not rise beyond the threshold) and one in the legend.
  EXPECT_EQ(count(html, "<circle class=\"reg\""), 2u);
  EXPECT_NE(html.find("B · float32 · 32K (32768 B) · busbw 13.500 GB/s · slowest of 2 group(s): "
                      "node1 · REGRESSION: busbw -33.3%, p99 +0.3%"),
            std::string::npos);
  EXPECT_NE(html.find("<b>1 regression</b>"), std::string::npos);
  EXPECT_NE(html.find("1 single size(s) beyond their own noise"), std::string::npos);
  EXPECT_EQ(count(html, "<tr class=\"v-regression\">"), 2u);  // regressions table + all rows
  EXPECT_EQ(count(html, "<tr class=\"v-same\">"), 1u);        // hidden until the box is ticked
  EXPECT_NE(html.find("<td>NCCL_ALGO</td><td>Ring</td><td>Tree</td>"), std::string::npos);
  EXPECT_NE(html.find(d.attribution_warning()), std::string::npos);
}

// plumb diff's status 3 shows on the page too, with what would make the runs judgeable.
TEST(HtmlReport, TooNoisyToJudgeSaysSoWithTheAdvice) {
  const baseline::Record a = record(1, "before", 1.0, {"node"}, {"allreduce"});
  const baseline::Record b = record(2, "after", 1.0, {"node"}, {"allreduce"});
  baseline::Diff d;
  d.a = {1, "before", a.created, a.source};
  d.b = {2, "after", b.created, b.source};
  d.threshold = 0.1;
  baseline::GroupDiff g;
  g.layer = "node";
  g.collective = "allreduce";
  g.dtype = "float32";
  g.min_bytes = 1 << 20;
  g.sizes = 3;
  g.change = -0.3;
  g.noise = 0.6;
  g.verdict = baseline::Verdict::kTooNoisy;
  d.groups = {g};
  ASSERT_EQ(d.exit_code(), 3);
  const std::string advice = d.too_noisy_advice();
  ASSERT_FALSE(advice.empty());
  const std::string html = render(a, &b, &d);
  EXPECT_NE(html.find("<b>0 regressions</b>"), std::string::npos);
  EXPECT_NE(html.find("<p class=\"warning\"><b>Too noisy to judge</b>: "), std::string::npos);
  EXPECT_NE(html.find("plumb baseline --rounds 5"), std::string::npos) << advice;
}

TEST(HtmlReport, NoRemoteResource) {
  baseline::Record a = record(1, "before", 1.0);
  const baseline::Record b = record(2, "after", 0.8);
  a.topo = {{"schema", "plumb.topo/1"}, {"hosts", {{{"name", "h0"}, {"numa_nodes", 2}}}}};
  const std::string html = render(a, &b);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  // Every src= and href= is a link inside the page.
  std::smatch m;
  const std::regex reference("(src|href)\\s*=\\s*\"([^\"]*)\"");
  for (auto it = html.cbegin(); std::regex_search(it, html.cend(), m, reference);
       it = m[0].second) {
    EXPECT_EQ(m[2].str().substr(0, 1), "#") << m[0].str();
  }
}

TEST(HtmlReport, Deterministic) {
  const baseline::Record a = record(1, "before", 1.0);
  const baseline::Record b = record(2, "after", 1.2);
  EXPECT_EQ(render(a, &b), render(a, &b));
  EXPECT_EQ(render(a), render(a));
}

TEST(HtmlReport, ContextTables) {
  baseline::Record a = record(1, "before", 1.0, {"node"}, {"allreduce"});
  baseline::Record b = a;
  b.id = 2;
  a.topo = {{"schema", "plumb.topo/1"},
            {"hosts", {{{"name", "h0"}, {"numa_nodes", 2}, {"accelerators", 8}}}},
            {"binding", {{{"rank", 0}, {"cpus", "0-7"}}, {{"rank", 1}, {"numa", 1}}}},
            {"warnings", {"rank 1 is not bound",
                          {{"rank", 2}, {"kind", "cross_numa"},
                           {"message", "rank 2 runs on NUMA node 0, its GPU sits on node 1"},
                           {"fix", "--bind-to numa"}}}}};
  a.env = {{"schema", "plumb.env/1"},
           {"host", "h0"},
           {"versions", {{"nccl", "2.18.3"}, {"cann", nullptr}}},
           {"sources", {{"nccl", "libnccl.so.2"}}},
           {"env", {{"NCCL_ALGO", "Ring"}}}};
  b.env = {{"versions", {{"nccl", "2.19.1"}}}};
  const std::string html = render(a, &b);
  EXPECT_NE(html.find("<th>accelerators</th><th>name</th><th>numa_nodes</th>"), std::string::npos);
  EXPECT_NE(html.find("<th>cpus</th><th>rank</th><th>numa</th></tr>"
                      "<tr><td>0-7</td><td>0</td><td></td></tr>"
                      "<tr><td></td><td>1</td><td>1</td></tr>"),
            std::string::npos);
  // A plumb.topo/1 warning object reads as its sentence (topo_json writes it as "message").
  EXPECT_NE(html.find("<ul class=\"warnings\"><li>rank 1 is not bound</li><li>rank 2 runs on "
                      "NUMA node 0, its GPU sits on node 1</li></ul>"),
            std::string::npos);
  EXPECT_NE(html.find("No topology in this baseline"), std::string::npos);  // B has none
  EXPECT_NE(html.find("<tr class=\"differs\"><th>nccl</th><td title=\"libnccl.so.2\">2.18.3</td>"
                      "<td title=\"\">2.19.1</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr class=\"differs\"><th>NCCL_ALGO</th><td title=\"\">Ring</td>"
                      "<td class=\"absent\">(absent)</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<th>cann</th><td title=\"\">not found</td>"), std::string::npos);
}

// plumb.topo/1 as topo_json writes it, 1 host and 2 ranks: the hosts and the ranks as tables, open
// (few ranks), rank 1's warning on its row; fields missing from a rank read "?".
TEST(HtmlReport, TopologyAsHostAndRankTables) {
  baseline::Record a = record(1, "before", 1.0, {"node"}, {"allreduce"});
  a.topo = parse_json(R"({
    "schema": "plumb.topo/1", "created": "2026-12-01T10:00:00Z",
    "hosts": [{"host": "h0", "source": "hwloc", "packages": 1, "cores": 8, "pus": 16,
               "numa_nodes": [{"os_index": 0, "memory_bytes": 17179869184, "cpus": "0-7"},
                              {"os_index": 1, "memory_bytes": 17179869184, "cpus": "8-15"}],
               "pci": [{"bus_id": "0000:18:00.0", "vendor_id": "10de", "device_id": "2330",
                        "class_id": "0302", "kind": "accelerator", "vendor": "NVIDIA",
                        "numa_node": 0, "os_devices": []},
                       {"bus_id": "0000:1a:00.0", "vendor_id": "15b3", "device_id": "1021",
                        "class_id": "0207", "kind": "rdma-nic", "vendor": "Mellanox",
                        "numa_node": 0, "os_devices": ["ib0", "mlx5_0"]}],
               "notes": []}],
    "ranks": [{"rank": 0, "host": "h0", "local_rank": 0, "cpus": "0-7", "numa_nodes": [0],
               "accelerator": {"index": 0, "named_by": "LOCAL_RANK=0", "bus_id": "0000:18:00.0",
                               "numa_node": 0, "problem": null}},
              {"rank": 1, "host": "h0", "local_rank": 1, "cpus": "0-15", "numa_nodes": [0, 1],
               "accelerator": null}],
    "warnings": [{"rank": 1, "host": "h0", "message": "rank 1 on h0 is bound across NUMA nodes 0,1",
                  "fix": {"numa_node": 0, "cpus": "0-7"}}]})",
                      "test topology");
  const std::string html = render(a);
  EXPECT_NE(html.find("<p class=\"note topo-count\">2 ranks on 1 host · 1 with a warning.</p>"
                      "<h4>Hosts</h4>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><th>h0</th><td class=\"num\">2 (ranks 0–1)</td><td>1 package · 8 "
                      "cores / 16 PUs</td><td class=\"num\">32 GiB</td><td>node 0: cpus 0-7<br>"
                      "node 1: cpus 8-15</td><td>1 × NVIDIA 10de:2330</td><td>ib0/mlx5_0 · NUMA 0"
                      "</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<h4>Ranks</h4><table class=\"rows topo-ranks\">"), std::string::npos);
  EXPECT_NE(html.find("<tr><td class=\"num\">0</td><td>h0</td><td class=\"num\">0</td><td "
                      "class=\"num\">0</td><td>0000:18:00.0</td><td class=\"num\">0</td><td>0-7"
                      "</td><td class=\"num\">0</td><td>ib0/mlx5_0</td><td></td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr class=\"warn\"><td class=\"num\">1</td><td>h0</td><td class=\"num\">"
                      "1</td><td class=\"num\">?</td><td>?</td><td class=\"num\">?</td><td>0-15"
                      "</td><td class=\"num\">0,1</td><td>?</td><td>rank 1 on h0 is bound across "
                      "NUMA nodes 0,1</td></tr>"),
            std::string::npos);
  EXPECT_EQ(html.find("<details"), std::string::npos);
  EXPECT_EQ(html.find("<th>pci</th>"), std::string::npos);  // not the field-by-field tables
}

// The spread over the rounds: a column of the results table, "—" for a size measured once, and
// an error bar of ± the spread on the busbw point.
TEST(HtmlReport, SpreadOverTheRounds) {
  baseline::Record a = record(1, "before", 1.0, {"node"}, {"allreduce"});
  a.comm = {{"settings", {{"rounds", 5}}}};
  for (comm::Row& r : a.rows) r.busbw_spread = r.group == "node1" ? 0.0125 : 0.5;
  a.rows[0].busbw_spread = a.rows[1].busbw_spread = kNaN;  // 1 B: measured once
  const std::string html = render(a);
  EXPECT_NE(html.find("A measured in 5 rounds.</p>"), std::string::npos);
  EXPECT_NE(html.find("<th>busbw (GB/s)</th><th>spread</th><th>p99 (µs)</th><th>slowest group"
                      "</th></tr>"),
            std::string::npos);
  // The slowest group (node1) at each size: its own spread, 1.2% (one decimal, as the console).
  EXPECT_EQ(count(html, "<td class=\"num spread\">1.2%</td>"), 6u);
  EXPECT_EQ(count(html, "<td class=\"num spread\">—</td>"), 1u);
  EXPECT_EQ(count(html, "<path class=\"err\" d=\"M"), 6u + 1);  // 6 points and the legend key
  EXPECT_NE(html.find(" · spread over the rounds ±1.2%"), std::string::npos);
  a.comm = nullptr;
  EXPECT_NE(render(a).find("A measured in 1 round.</p>"), std::string::npos);
}

TEST(HtmlReport, OneBaselineAndNoRows) {
  baseline::Record a;
  a.source = "empty";
  const std::string html = render(a);
  EXPECT_EQ(count(html, "class=\"chart\""), 0u);
  EXPECT_NE(html.find("No result rows."), std::string::npos);
  EXPECT_EQ(html.find("id=\"diff\""), std::string::npos);
  EXPECT_NE(html.find("A: empty"), std::string::npos);
  EXPECT_NE(html.find("no environment recorded"), std::string::npos);
}

}  // namespace
}  // namespace plumb::report
