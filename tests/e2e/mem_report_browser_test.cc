// The memory report in a real browser, the same way as report_browser_test.cc: Debian's headless
// Chromium parses the pages of the leak and fragmented-OOM fixtures (with two policy replays
// built by hand); the DOM must hold the charts, the leaking stack by its frames, the largest free
// block and the failed request, axes in MiB/GiB; the console must stay silent, and screenshots
// are kept as test artefacts (<build>/artefacts/mem-report.png, mem-report-oom.png).
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

// The page of a fixture (tests/fixtures/mem) with the two replays, written to the artefacts as
// `name` (.html).
std::string write_report(const std::string& fixture = "leak.pickle",
                         const std::string& name = "mem-report") {
  const mem::Trace t = mem::read_trace(PLUMB_TEST_FIXTURES "/mem/" + fixture, 0);
  const mem::Analysis a = mem::analyze(t, {});
  std::filesystem::create_directories(kArtefacts);
  const std::string path = kArtefacts + "/" + name + ".html";
  std::ofstream out(path);
  report::write_mem_html(t, a, policies(a), {}, out);
  return path;
}

// The DOM Chromium built from the page, after its (absent) scripts ran.
std::string dom_of(const std::string& path) {
  const test::Run run = chromium("--dump-dom file://" + path, "dom");
  EXPECT_EQ(run.exit_code, 0) << "chromium (exit 124: timed out after " << kChromiumTimeoutSeconds
                              << " s)\n"
                              << run.err;
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
  return run.out;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
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

// A leak: the stack that grew, by its frames as `plumb mem analyze` names them, with its bytes
// per step and live allocations, in a box above the first chart.
TEST(MemReportBrowser, LeakPageNamesTheLeakingStack) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string dom = dom_of(write_report());
  const size_t box = dom.find("<h2>Leaking stacks</h2>");
  ASSERT_NE(box, std::string::npos);
  EXPECT_LT(box, dom.find("<section id=\"timeline\">"));
  EXPECT_TRUE(has(dom,
                  "<code>training_log (megatron/training/training.py:1275) &lt; train "
                  "(megatron/training/training.py:1540)</code>"));
  EXPECT_TRUE(has(dom, "<b>+3 MiB per step</b>"));
  EXPECT_TRUE(has(dom, "<td class=\"num\">39</td>"));
  EXPECT_TRUE(has(dom, "<td class=\"num\">0 B → 117 MiB</td>"));
}

// A fragmentation OOM: the largest free block over the events, the request as a dashed red line
// named in the legend, and the two rings at the OOM, on the trace that ran out.
TEST(MemReportBrowser, FragmentationOomPageChartsTheLargestFreeBlockAndTheRequest) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string dom = dom_of(write_report("fragmented_oom.pickle", "mem-report-oom"));
  EXPECT_EQ(count(dom, "<svg class=\"lchart\""), 5u);
  EXPECT_TRUE(has(dom, "<figcaption>Largest free block and the OOM request</figcaption>"));
  EXPECT_TRUE(has(dom, "</svg>largest free block</span>"));
  EXPECT_TRUE(has(dom, "</svg>OOM request: 512 MiB asked at event 335</span>"));
  EXPECT_TRUE(has(dom, "<polyline class=\"line k4 d1\""));
  EXPECT_TRUE(has(dom, ">largest free block 32 MiB</text>"));
  EXPECT_TRUE(has(dom, ">free in all 2.2 GiB</text>"));
  // The units on the axes: each tick says GiB or MiB, as the console's figures do.
  EXPECT_TRUE(has(dom, "dominant-baseline=\"middle\">80 GiB</text>"));
  EXPECT_TRUE(has(dom, "dominant-baseline=\"middle\">500 MiB</text>"));
  EXPECT_FALSE(has(dom, "dominant-baseline=\"middle\">80G</text>"));
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
  const std::string oom_png = kArtefacts + "/mem-report-oom.png";
  std::filesystem::remove(oom_png);
  const test::Run oom = chromium(
      fmt::format("--screenshot={} --window-size=1400,2900 file://{}", oom_png,
                  write_report("fragmented_oom.pickle", "mem-report-oom")),
      "shot");
  ASSERT_EQ(oom.exit_code, 0) << oom.err;
  EXPECT_GT(std::filesystem::file_size(oom_png), 50'000u);
  std::cout << "screenshot: " << oom_png << "\n";
}

}  // namespace
}  // namespace plumb
