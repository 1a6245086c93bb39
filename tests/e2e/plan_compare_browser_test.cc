// The plan compare page in a real browser, as the other HTML reports' tests do: Debian's headless
// Chromium parses the page `plumb plan compare --html` wrote for four catalog chips under one
// budget; the DOM must hold the table and the three charts, the console must stay silent, and a
// screenshot is kept as a test artefact (<build>/artefacts/plan-compare.png). Structure only: the
// catalog's prices and the predictor change.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

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

std::string write_page() {
  std::filesystem::create_directories(kArtefacts);
  const std::string path = kArtefacts + "/plan-compare.html";
  const test::Run r = test::run_command(
      fmt::format("{} plan compare --model llama3-70b --hardware h100-sxm,h200,b200,mi300x "
                  "--budget 3e8 --tokens 15e12 --html {}", PLUMB_BIN, path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

TEST(PlanCompareBrowser, TableThreeChartsAndASilentConsole) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_page();
  const test::Run run = chromium("--dump-dom file://" + path, "plan-compare-dom");
  ASSERT_EQ(run.exit_code, 0) << "chromium (exit 124: timed out after " << kChromiumTimeoutSeconds
                              << " s)\n"
                              << run.err;
  // Rent, purchase and energy against days.
  EXPECT_EQ(count(run.out, "<svg class=\"lchart\""), 3u);
  EXPECT_EQ(count(run.out, "<figure class=\"chart\""), 3u);
  for (const char* chip : {"h100-sxm", "h200", "b200", "mi300x"}) {
    EXPECT_NE(run.out.find(fmt::format("<tr><td class=\"chip\">{}</td>", chip)), std::string::npos)
        << chip;
  }
  EXPECT_NE(run.out.find("<section id=\"prices\">"), std::string::npos);
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
}

TEST(PlanCompareBrowser, Screenshot) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_page();
  const std::string png = kArtefacts + "/plan-compare.png";
  std::filesystem::remove(png);
  const test::Run run = chromium(
      fmt::format("--screenshot={} --window-size=1400,2000 file://{}", png, path),
      "plan-compare-shot");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << run.out << run.err;
  // A blank 1400×2000 page compresses to a few KiB; a table and charts do not.
  EXPECT_GT(std::filesystem::file_size(png), 50'000u);
  std::cout << "screenshot: " << png << "\n";
}

}  // namespace
}  // namespace plumb
