// The HTML report in a real browser: Debian's headless Chromium parses the page, runs it, and
// takes a screenshot (kept as a test artefact). The page must have one chart per (layer,
// collective) once parsed, and say nothing on its console.
//
// How Chromium 156 reports what a page says, with --enable-logging=stderr (checked with a page
// that calls console.error and throws, ConsoleCheckCatchesPageErrors below):
//   [4464:4464:1202/134431.048938:INFO:CONSOLE:2] "deliberate console error", source: file:///…
//   [4464:4464:1202/134431.049236:INFO:CONSOLE:3] "Uncaught ReferenceError: …", source: file:///…
// console.error and console.log alike are INFO:CONSOLE lines, so any such line fails the test
// (the report has no script and should print nothing). The launcher's own noise (D-Bus, vaapi)
// never contains ":CONSOLE".
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "baseline/diff.h"
#include "baseline/store.h"
#include "report/html_report.h"
#include "report/topo_reporter.h"
#include "topo/binding.h"
#include "topo/collect.h"
#include "support/browser.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::string kArtefacts = PLUMB_ARTEFACT_DIR;

using test::chromium;
using test::chromium_missing;
using test::count;
using test::kChromiumTimeoutSeconds;
using test::page_console_lines;

comm::Row row(const std::string& layer, int group, const std::string& coll, uint64_t bytes,
              double busbw) {
  comm::Row r;
  r.layer = layer;
  r.group = fmt::format("{}{}", layer, group);
  r.group_ranks = 4;
  r.collective = coll;
  r.dtype = "bfloat16";
  r.op = coll == "alltoall" || coll == "allgather" ? "none" : "sum";
  r.requested_bytes = r.bytes = bytes;
  r.busbw_gbps = busbw;
  r.algbw_gbps = busbw / 1.5;
  r.time_us = static_cast<double>(bytes) / (r.algbw_gbps * 1e3);
  r.p50_us = r.time_us;
  r.p99_us = r.time_us * (1.2 + 0.1 * group);
  r.max_us = r.p99_us * 1.1;
  r.wrong = 0;
  r.busbw_spread = 0.02 + 0.01 * group;  // 3 rounds' median absolute deviation, relative
  return r;
}

constexpr int kHosts = 128;
constexpr int kRanksPerHost = 8;

// plumb topo's record of 128 copies of the fixture's DGX-like host (8 accelerators, 4 RDMA NICs
// per NUMA node... as dgx-like-2numa.xml holds them), 8 ranks each bound to their accelerator's
// NUMA node, as make_binding and check_binding make them, but rank 9 bound across both nodes.
nlohmann::json topology() {
  const topo::TopoRecord host =
      topo::collect_from_xml(std::string(PLUMB_SOURCE_DIR) + "/tests/fixtures/topo/" +
                             "dgx-like-2numa.xml");
  topo::TopoRecord record;
  record.created = "2026-12-01T10:00:00Z";
  for (int h = 0; h < kHosts; ++h) {
    topo::Topology t = host.hosts.front();
    t.host = fmt::format("gpu-{:03}", h + 1);
    for (int local = 0; local < kRanksPerHost; ++local) {
      const int rank = h * kRanksPerHost + local;
      const topo::CpuSet cpus = topo::parse_cpu_list(
          rank == 9 ? "0-63" : local < 4 ? "0-15,32-47" : "16-31,48-63", "test");
      topo::RankBinding b =
          topo::make_binding(t, rank, local, cpus, {{"LOCAL_RANK", std::to_string(local)}});
      if (auto w = topo::check_binding(t, b)) record.warnings.push_back(*w);
      record.ranks.push_back(std::move(b));
    }
    record.hosts.push_back(std::move(t));
  }
  return report::topo_json(record);
}

// 2 layers × 4 collectives × 2 groups × 1 KiB .. 1 GiB; `slow` scales one collective's busbw.
baseline::Record record(int64_t id, const std::string& label, double slow) {
  baseline::Record r;
  r.id = id;
  r.label = label;
  r.created = fmt::format("2026-12-0{}T10:00:00Z", id);
  r.source = "plumb baseline";
  r.hosts = {"gpu-001", "gpu-002"};
  r.comm = {{"schema", "plumb.comm/1"}, {"settings", {{"rounds", 3}, {"iters", 20}}}};
  r.env = {{"schema", "plumb.env/1"},
           {"host", "gpu-001"},
           {"versions", {{"nccl", id == 1 ? "2.18.3" : "2.19.1"}, {"cann", nullptr}}},
           {"env", {{"NCCL_ALGO", "Ring"}}}};
  static const nlohmann::json topo = topology();
  r.topo = topo;
  for (const char* layer : {"node", "spine"}) {
    for (const char* coll : {"allreduce", "allgather", "reducescatter", "alltoall"}) {
      for (uint64_t bytes = 1024; bytes <= (uint64_t{1} << 30); bytes *= 4) {
        const double peak = std::string(layer) == "node" ? 180 : 45;
        const double bw =
            peak * bytes / (bytes + 4e6) * (std::string(coll) == "alltoall" ? slow : 1);
        for (int g = 0; g < 2; ++g)
          r.rows.push_back(row(layer, g, coll, bytes, bw * (1 - 0.05 * g)));
      }
    }
  }
  return r;
}

// The report of two baselines (B's alltoall 30% slower) under the artefact folder.
std::string write_report() {
  const baseline::Record a = record(1, "before-upgrade", 1.0);
  const baseline::Record b = record(2, "after-upgrade", 0.7);
  const baseline::Diff d = baseline::diff(a, b, {0.10});
  std::filesystem::create_directories(kArtefacts);
  const std::string path = kArtefacts + "/report.html";
  std::ofstream out(path);
  report::write_html_report(a, &b, &d, out);
  return path;
}

TEST(ReportBrowser, OneChartPerLayerAndCollectiveAndASilentConsole) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const test::Run run = chromium("--dump-dom file://" + path, "dom");
  ASSERT_EQ(run.exit_code, 0) << "chromium (exit 124: timed out after " << kChromiumTimeoutSeconds
                              << " s)\n"
                              << run.err;
  // The DOM after parsing: 8 figures, each with its two SVG panels.
  EXPECT_EQ(count(run.out, "class=\"chart\""), 8u);
  EXPECT_EQ(count(run.out, "<svg class=\"panel\""), 16u);
  EXPECT_NE(run.out.find("data-layer=\"spine\" data-collective=\"alltoall\""), std::string::npos);
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
}

// The topology of 1,024 ranks on 128 hosts: a table per baseline of the hosts and of the ranks,
// both collapsed at this size, with the one rank that has a warning shown above them.
TEST(ReportBrowser, TopologyTablesOfAThousandRanks) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const test::Run run = chromium("--dump-dom file://" + write_report(), "topology");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string& dom = run.out;
  EXPECT_EQ(count(dom, "<p class=\"note topo-count\">1024 ranks on 128 hosts · 1 with a warning."
                       "</p>"),
            2u);  // A and B
  EXPECT_EQ(count(dom, "<details class=\"topo-hosts\"><summary>128 hosts: CPUs, memory, NUMA "
                       "nodes, accelerators, RDMA NICs</summary><table class=\"rows topo-hosts\">"
                       "<tbody><tr><th>host</th><th>ranks</th><th>CPUs</th><th>memory</th><th>NUMA "
                       "nodes</th><th>accelerators</th><th>RDMA NICs</th></tr>"),
            2u);
  EXPECT_NE(dom.find("<tr><th>gpu-002</th><td class=\"num\">8 (ranks 8–15)</td><td>2 packages · "
                     "32 cores / 64 PUs</td><td class=\"num\">2 TiB</td><td>node 0: cpus "
                     "0-15,32-47<br>node 1: cpus 16-31,48-63</td><td>8 × NVIDIA 10de:2330</td>"
                     "<td>ib0/mlx5_0 · NUMA 0<br>ib1/mlx5_1 · NUMA 0<br>ib2/mlx5_2 · NUMA 1<br>"
                     "ens9f0np0/mlx5_3 · NUMA 1</td></tr>"),
            std::string::npos);
  const std::string header =
      "<tr><th>rank</th><th>host</th><th>local rank</th><th>accelerator</th><th>bus id</th>"
      "<th>its NUMA node</th><th>bound to CPUs</th><th>bound to NUMA</th><th>RDMA NICs on its "
      "NUMA node</th><th>warning</th></tr>";
  // The rank with a warning, above the collapsed table of all of them.
  EXPECT_EQ(count(dom, "<h4>Ranks with a warning (1 of 1024)</h4><table class=\"rows topo-ranks "
                       "flagged\"><tbody>" + header +
                       "<tr class=\"warn\"><td class=\"num\">9</td><td>gpu-002</td>"),
            2u);
  EXPECT_EQ(count(dom, "<details class=\"topo-ranks\"><summary>All 1024 ranks, by host</summary>"
                       "<table class=\"rows topo-ranks\"><tbody>" + header),
            2u);
  EXPECT_EQ(count(dom, "<tr class=\"host\"><th colspan=\"10\">"), 2u * kHosts);
  EXPECT_EQ(count(dom, "<tr class=\"host\"><th colspan=\"10\">gpu-128 · 8 (ranks 1016–1023)"
                       "</th></tr>"),
            2u);
  EXPECT_EQ(count(dom, "<tr class=\"warn\">"), 4u);  // rank 9 flagged and in the full table
  EXPECT_EQ(count(dom, "<tr><td class=\"num\">1020</td><td>gpu-128</td><td class=\"num\">4"
                       "</td><td class=\"num\">4</td><td>0000:9a:00.0</td><td class=\"num\">1"
                       "</td><td>16-31,48-63</td><td class=\"num\">1</td><td>ib2/mlx5_2, "
                       "ens9f0np0/mlx5_3</td><td></td></tr>"),
            2u);
  EXPECT_EQ(count(dom, "<details open"), 0u);
}

// The rounds' spread: a column per baseline in the results table and an error bar on every busbw
// point (the slowest group's: 3.0%), with the round count in the note.
TEST(ReportBrowser, SpreadOverTheRoundsInTheTableAndTheCharts) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const test::Run run = chromium("--dump-dom file://" + write_report(), "spread");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string& dom = run.out;
  EXPECT_NE(dom.find("A measured in 3 rounds · B measured in 3 rounds.</p>"), std::string::npos);
  EXPECT_NE(dom.find("<tr><th>layer</th><th>collective</th><th>dtype</th><th>size</th><th>busbw A "
                     "(GB/s)</th><th>spread A</th><th>busbw B (GB/s)</th><th>spread B</th><th>p99 "
                     "A (µs)</th><th>p99 B (µs)</th></tr>"),
            std::string::npos);
  // 2 layers × 4 collectives × 11 sizes, each with A's and B's spread.
  EXPECT_EQ(count(dom, "<td class=\"num spread\">3.0%</td>"), 2u * 2 * 4 * 11);
  EXPECT_NE(dom.find("<tr><td>node</td><td>allreduce</td><td>bfloat16</td><td class=\"num\">1M"
                     "</td><td class=\"num\" title=\"slowest group: node1\">35.52</td><td "
                     "class=\"num spread\">3.0%</td>"),
            std::string::npos);
  // One error bar per busbw point (A and B, 11 sizes, 8 charts), and one key per legend.
  EXPECT_EQ(count(dom, "<path class=\"err\" d=\"M"), 8u * 2 * 11 + 8u);
  EXPECT_EQ(count(dom, "busbw ± its spread over the rounds</span>"), 8u);
  EXPECT_NE(dom.find(" · spread over the rounds ±3.0%"), std::string::npos);
}

TEST(ReportBrowser, Screenshot) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const std::string png = kArtefacts + "/report.png";
  std::filesystem::remove(png);
  const test::Run run =
      chromium(fmt::format("--screenshot={} --window-size=1400,3000 file://{}", png, path), "shot");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << run.out << run.err;
  // A blank 1400×3000 page compresses to a few KiB; charts, tables and text do not.
  EXPECT_GT(std::filesystem::file_size(png), 50'000u);
  std::cout << "screenshot: " << png << "\n";
}

// The console check can fail: a page that logs an error and throws is caught, both lines.
TEST(ReportBrowser, ConsoleCheckCatchesPageErrors) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = test::temp_dir("report-browser-bad") + "/bad.html";
  test::write_file(path,
                   "<!DOCTYPE html><html><body><div class=\"chart\"></div>"
                   "<script>console.error('deliberate console error');</script>"
                   "<script>undefinedFunctionCall();</script></body></html>");
  const test::Run run = chromium("--dump-dom file://" + path, "bad");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = page_console_lines(run.err);
  ASSERT_EQ(lines.size(), 2u) << run.err;
  EXPECT_NE(lines[0].find("\"deliberate console error\", source: file://"), std::string::npos);
  EXPECT_NE(lines[1].find("Uncaught ReferenceError: undefinedFunctionCall is not defined"),
            std::string::npos);
}

}  // namespace
}  // namespace plumb
