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
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "baseline/diff.h"
#include "baseline/store.h"
#include "report/html_report.h"
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
  return r;
}

// 2 layers × 4 collectives × 2 groups × 1 KiB .. 1 GiB; `slow` scales one collective's busbw.
baseline::Record record(int64_t id, const std::string& label, double slow) {
  baseline::Record r;
  r.id = id;
  r.label = label;
  r.created = fmt::format("2026-12-0{}T10:00:00Z", id);
  r.source = "plumb baseline";
  r.hosts = {"gpu-001", "gpu-002"};
  r.env = {{"schema", "plumb.env/1"},
           {"host", "gpu-001"},
           {"versions", {{"nccl", id == 1 ? "2.18.3" : "2.19.1"}, {"cann", nullptr}}},
           {"env", {{"NCCL_ALGO", "Ring"}}}};
  r.topo = {{"schema", "plumb.topo/1"},
            {"hosts",
             {{{"name", "gpu-001"}, {"numa_nodes", 2}}, {{"name", "gpu-002"}, {"numa_nodes", 2}}}},
            {"warnings", {{{"message", "rank 3 is bound to NUMA node 1, its GPU to node 0"}}}}};
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
