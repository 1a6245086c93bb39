// The memory report in a real browser, the same way as report_browser_test.cc: Debian's headless
// Chromium parses the page of the leak fixture (with two policy replays built by hand), the DOM
// must hold the four charts, the console must stay silent, and a screenshot is kept as a test
// artefact (<build>/artefacts/mem-report.png).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "mem/analysis.h"
#include "mem/replay.h"
#include "mem/snapshot_reader.h"
#include "report/mem_html.h"
#include "support/browser.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::string kArtefacts = PLUMB_ARTEFACT_DIR;
constexpr uint64_t kTwoMiB = 2 << 20;         // the granularity the "expandable" row rounds to

using test::chromium;
using test::chromium_missing;
using test::count;
using test::kChromiumTimeoutSeconds;
using test::page_console_lines;

// Two replays for the comparison: "pytorch" reserves what the trace recorded; "expandable"
// reserves the allocated bytes rounded up to 2 MiB pages.
std::vector<mem::ReplayResult> policies(const mem::Analysis& a) {
  mem::ReplayResult pytorch;
  pytorch.policy = "pytorch";
  pytorch.description = "PyTorch's caching allocator, default settings";
  mem::ReplayResult expandable;
  expandable.policy = "expandable";
  expandable.description = "expandable_segments:True";
  for (const mem::Sample& s : a.timeline.samples) {
    pytorch.reserved.push_back(s.reserved);
    expandable.reserved.push_back((s.allocated + kTwoMiB - 1) / kTwoMiB * kTwoMiB);
  }
  for (mem::ReplayResult* r : {&pytorch, &expandable}) {
    r->allocations = a.events;
    r->peak_reserved = *std::max_element(r->reserved.begin(), r->reserved.end());
    r->final_reserved = r->reserved.back();
    r->peak_allocated = a.timeline.peak.allocated;
    r->fragmentation =
        1 - static_cast<double>(a.timeline.peak.active) / static_cast<double>(r->peak_reserved);
  }
  pytorch.segment_allocs = 19;
  expandable.segment_allocs = 317;
  expandable.segment_frees = 64;
  return {pytorch, expandable};
}

std::string write_report() {
  const mem::Trace t = mem::read_trace(PLUMB_TEST_FIXTURES "/mem/leak.pickle", 0);
  const mem::Analysis a = mem::analyze(t, {});
  std::filesystem::create_directories(kArtefacts);
  const std::string path = kArtefacts + "/mem-report.html";
  std::ofstream out(path);
  report::write_mem_html(t, a, policies(a), {}, out);
  return path;
}

TEST(MemReportBrowser, FourChartsAndASilentConsole) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const test::Run run = chromium("--dump-dom file://" + path, "dom");
  ASSERT_EQ(run.exit_code, 0) << "chromium (exit 124: timed out after " << kChromiumTimeoutSeconds
                              << " s)\n"
                              << run.err;
  // Timeline, fragmentation, per-step minimum, reserved per policy.
  EXPECT_EQ(count(run.out, "<svg class=\"lchart\""), 4u);
  EXPECT_EQ(count(run.out, "<figure class=\"chart\""), 4u);
  EXPECT_NE(run.out.find("<td>expandable</td>"), std::string::npos);
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
}

TEST(MemReportBrowser, Screenshot) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const std::string png = kArtefacts + "/mem-report.png";
  std::filesystem::remove(png);
  const test::Run run =
      chromium(fmt::format("--screenshot={} --window-size=1400,2900 file://{}", png, path), "shot");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << run.out << run.err;
  // A blank 1400×2900 page compresses to a few KiB; charts, tables and text do not.
  EXPECT_GT(std::filesystem::file_size(png), 50'000u);
  std::cout << "screenshot: " << png << "\n";
}

}  // namespace
}  // namespace plumb
