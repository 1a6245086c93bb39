// The page of two serving records in a real browser, the same way as set_report_browser_test.cc:
// Debian's headless Chromium parses the page plumb report A B writes for two serving records (a
// sweep at concurrency 1, 4 and 16, and the same with TPOT 20% slower; tests/support/
// serve_record.h). The DOM must hold the setup and a run table per record with their figures, the
// six charts against the concurrency with both records' points, both Pareto sections, and the
// console must stay silent. A screenshot is kept as a test artefact
// (<build>/artefacts/serve-report.png).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "report/serve_html.h"
#include "support/browser.h"
#include "support/serve_record.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::string kArtefacts = PLUMB_ARTEFACT_DIR;

using test::chromium;
using test::chromium_missing;
using test::count;
using test::kChromiumTimeoutSeconds;
using test::page_console_lines;

std::string write_report() {
  std::filesystem::create_directories(kArtefacts);
  const std::string path = kArtefacts + "/serve-report.html";
  const serve::ServeResult a = test::serve_sweep();
  const serve::ServeResult b = test::serve_sweep(1.2);
  std::ofstream out(path);
  report::write_serve_html({"baseline 1", &a}, {"baseline 2", &b}, out);
  return path;
}

TEST(ServeReportBrowser, TablesChartsAndParetoOfBothAndASilentConsole) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const test::Run run = chromium("--dump-dom file://" + path, "serve-dom");
  ASSERT_EQ(run.exit_code, 0) << "chromium (exit 124: timed out after " << kChromiumTimeoutSeconds
                              << " s)\n"
                              << run.err;
  for (const char* id : {"setup", "charts", "pareto", "pareto-b"}) {
    EXPECT_EQ(count(run.out, fmt::format("<section id=\"{}\"", id)), 1u) << id;
  }
  EXPECT_EQ(count(run.out, "<table class=\"rows serve-setup\">"), 2u);
  EXPECT_EQ(count(run.out, "<table class=\"rows serve-runs\">"), 2u);
  // c=4 of A: TTFT p50 24 ms, p99 33 ms, TPOT p50 5 ms, p99 5.9 ms; of B: TPOT 6 and 7.08 ms.
  EXPECT_NE(run.out.find("<td class=\"num\">24.00</td><td class=\"num\">33.00</td>"
                         "<td class=\"num\">5.00</td><td class=\"num\">5.90</td>"),
            std::string::npos);
  EXPECT_NE(run.out.find("<td class=\"num\">24.00</td><td class=\"num\">33.00</td>"
                         "<td class=\"num\">6.00</td><td class=\"num\">7.08</td>"),
            std::string::npos);
  EXPECT_EQ(count(run.out, "<tr class=\"failed\"><td>c=16</td>"), 2u);
  for (const char* chart : {"ttft", "tpot", "itl", "e2e", "throughput", "requests"}) {
    EXPECT_EQ(count(run.out, fmt::format("<figure class=\"chart\" data-chart=\"{}\">", chart)), 1u)
        << chart;
  }
  // Each latency chart: p50 and p99 of A and B, three points each, all hoverable.
  EXPECT_NE(run.out.find("baseline 2\nc=4\nTPOT (ms) p99: 7.08"), std::string::npos);
  EXPECT_EQ(count(run.out, "<svg class=\"lchart\""), 8u);  // six charts, two Pareto charts
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
}

TEST(ServeReportBrowser, Screenshot) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const std::string png = kArtefacts + "/serve-report.png";
  std::filesystem::remove(png);
  const test::Run run = chromium(
      fmt::format("--screenshot={} --window-size=1400,2400 file://{}", png, path), "serve-shot");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << run.out << run.err;
  EXPECT_GT(std::filesystem::file_size(png), 50'000u);  // tables and charts, not a blank page
}

}  // namespace
}  // namespace plumb
