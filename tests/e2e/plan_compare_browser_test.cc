// The plan compare page in a real browser, as the other HTML reports' tests do: Debian's headless
// Chromium parses the page `plumb plan compare --html` wrote for four catalog chips under one
// budget; the DOM must hold the table and the three charts, the legends must name each chip as its
// hardware file and the table do, every point and its label must lie wholly inside its chart (the
// browser's own geometry, by a probe script added to a copy of the page), the console must stay
// silent, and a screenshot is kept as a test artefact (<build>/artefacts/plan-compare.png).
// Structure only: the catalog's prices and the predictor change.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
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

TEST(PlanCompareBrowser, TheLegendsNameEachChip) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_page();
  const test::Run run = chromium("--dump-dom file://" + path, "plan-compare-legend");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The hardware file's name, then the label of the table's rows; in each of the three legends.
  for (const char* chip : {"NVIDIA H100 SXM · h100-sxm", "NVIDIA H200 SXM · h200",
                           "NVIDIA B200 (HGX, 1000 W) · b200", "AMD Instinct MI300X · mi300x"}) {
    EXPECT_EQ(count(run.out, fmt::format("</svg>{}</span>", chip)), 3u) << chip;
  }
}

// For each chart: every point (circle) inside the plot's frame and the svg's viewBox, every point
// label inside the viewBox, by getBBox in the svg's user units; the verdict in <pre id="probe">.
constexpr const char* kGeometryProbe = R"(<script>
const bad = []; let points = 0, labels = 0;
const inside = (b, r) => b.x >= r.x - 0.01 && b.y >= r.y - 0.01 &&
    b.x + b.width <= r.x + r.width + 0.01 && b.y + b.height <= r.y + r.height + 0.01;
document.querySelectorAll('svg.lchart').forEach((svg, k) => {
  const vb = svg.viewBox.baseVal, frame = svg.querySelector('rect.frame').getBBox();
  svg.querySelectorAll('g.pts circle').forEach(c => {
    ++points;
    const b = c.getBBox();
    if (!inside(b, vb) || !inside(b, frame)) bad.push(`chart ${k} point at ${b.x},${b.y}`);
  });
  svg.querySelectorAll('text.plabel').forEach(t => {
    ++labels;
    const b = t.getBBox();
    if (!inside(b, vb)) bad.push(`chart ${k} label ${t.textContent}`);
  });
});
const pre = document.createElement('pre');
pre.id = 'probe';
pre.textContent = `points ${points}, labels ${labels > 0 ? 'some' : 'none'}, outside: ` +
    (bad.length ? bad.join('; ') : 'none');
document.body.append(pre);
</script></body>)";

TEST(PlanCompareBrowser, EveryPointAndItsLabelInsideItsChart) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  std::string page = test::read_file(write_page());
  const size_t end = page.rfind("</body>");
  ASSERT_NE(end, std::string::npos);
  page.replace(end, std::string_view("</body>").size(), kGeometryProbe);
  const std::string probed = kArtefacts + "/plan-compare-probed.html";
  test::write_file(probed, page);
  const test::Run run = chromium("--dump-dom file://" + probed, "plan-compare-geometry");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Four chips at three budget tiers: 12 points in each of the three charts.
  EXPECT_TRUE(run.out.find("<pre id=\"probe\">points 36, labels some, outside: none</pre>") !=
              std::string::npos)
      << run.out.substr(run.out.find("<pre id=\"probe\">"));
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
