// The page of two baseline sets in a real browser, the same way as step_report_browser_test.cc:
// Debian's headless Chromium parses the page `plumb report A B` writes for two sets (A with all
// seven parts, B without its recovery and serving parts; built from tests/support/set_record.h), the DOM must
// hold each part's section with its figures -- the memory table's settled levels as
// mem::memory_baseline computes them from the train-events lines, the comm chart, the recovery
// rows -- B's missing part with its reason, and the console must stay silent. A screenshot is
// kept as a test artefact (<build>/artefacts/set-report.png).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "baseline/diff.h"
#include "common/units.h"
#include "report/set_html.h"
#include "support/browser.h"
#include "support/set_record.h"
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
  const std::string path = kArtefacts + "/set-report.html";
  baseline::Record a = test::full_set("before", 8, 2.5);
  a.id = 1;
  baseline::Record b = test::set_without_recovery("after");
  b.id = 2;
  const baseline::Diff d = baseline::diff(a, b, {});
  std::ofstream out(path);
  report::write_set_html(a, &b, &d, out);
  return path;
}

TEST(SetReportBrowser, EachPartWithItsFiguresAndASilentConsole) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const test::Run run = chromium("--dump-dom file://" + path, "dom");
  ASSERT_EQ(run.exit_code, 0) << "chromium (exit 124: timed out after " << kChromiumTimeoutSeconds
                              << " s)\n"
                              << run.err;
  for (const char* id :
       {"topology", "versions", "communication", "step", "memory", "recovery", "serving"}) {
    EXPECT_EQ(count(run.out, fmt::format("<section id=\"{}\"", id)), 1u) << id;
  }
  // Topology: both hosts' tables; versions: the compare table.
  EXPECT_EQ(count(run.out, "<h3>Topology — "), 2u);
  EXPECT_NE(run.out.find("1.13.1"), std::string::npos);
  // Communication: the overlay chart of allreduce @ world with both baselines' points; serving:
  // A's TTFT, TPOT, ITL, E2E, tokens/s and requests/s against the concurrency.
  EXPECT_EQ(count(run.out, "<figure class=\"chart\""), 7u);
  EXPECT_EQ(count(run.out, "<table class=\"rows serve-runs\">"), 1u);
  EXPECT_NE(run.out.find("serving: missing — not asked for: no --serve-url"), std::string::npos);
  // Model step: a figures table per set.
  EXPECT_EQ(count(run.out, "<table class=\"rows step-figures\">"), 2u);
  // Memory: per set a row per rank with its settled level, and the checkpoint check.
  const mem::MemoryBaseline m = test::set_memory_baseline();
  EXPECT_EQ(count(run.out, "<table class=\"rows mem-ranks\">"), 2u);
  for (const mem::RankMemory& r : m.ranks) {
    const std::string row = fmt::format(
        "<td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
        r.rank, r.steps, r.warmup_steps, format_bytes(static_cast<uint64_t>(*r.settled_bytes)));
    EXPECT_EQ(count(run.out, row), 2u) << row;
  }
  EXPECT_EQ(count(run.out, "<table class=\"rows checkpoint\">"), 2u);
  // Recovery: A's two failures; B's part missing with its reason.
  EXPECT_EQ(count(run.out, "<table class=\"rows recoveries\">"), 1u);
  EXPECT_NE(run.out.find("<td>killed by signal 9</td>"), std::string::npos);
  EXPECT_NE(run.out.find("recovery: missing — --skip recovery: the drill was not run"),
            std::string::npos);
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
}

TEST(SetReportBrowser, Screenshot) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const std::string png = kArtefacts + "/set-report.png";
  std::filesystem::remove(png);
  const test::Run run =
      chromium(fmt::format("--screenshot={} --window-size=1400,2400 file://{}", png, path), "shot");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << run.out << run.err;
  // A blank page compresses to a few KiB; tables, charts and text do not.
  EXPECT_GT(std::filesystem::file_size(png), 50'000u);
  std::cout << "screenshot: " << png << "\n";
}

}  // namespace
}  // namespace plumb
