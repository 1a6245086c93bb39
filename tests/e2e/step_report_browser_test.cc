// The step report in a real browser, the same way as mem_report_browser_test.cc: Debian's headless
// Chromium parses the page of a StepResult built here (4 ranks × 3 steps, a swimlane of 40
// kernels per rank; `plumb step` itself is tested in step_cli_test.cc), the DOM must hold one
// bar per rank and step and one swimlane row per rank, the console must stay silent, and a
// screenshot is kept as a test artefact (<build>/artefacts/step-report.png).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "report/step_html.h"
#include "step/result.h"
#include "support/browser.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::string kArtefacts = PLUMB_ARTEFACT_DIR;
constexpr int kRanks = 4;
constexpr int kSteps = 3;
constexpr int kKernels = 40;  // per rank in the swimlane step: compute, then its all-reduce

using test::chromium;
using test::chromium_missing;
using test::count;
using test::kChromiumTimeoutSeconds;
using test::page_console_lines;

// Rank r's steps take 100 + 5r ms: 60 ms compute, 20 + 4r ms communication of which 10 ms
// overlapped, 2 ms memory, the rest idle. Rank 3 is the straggler.
step::StepResult result() {
  step::StepResult r;
  r.world_size = kRanks;
  for (int rank = 0; rank < kRanks; ++rank) {
    step::RankSteps steps{rank, fmt::format("traces/rank{}<&>.json", rank), "kineto", {}};
    for (int s = 0; s < kSteps; ++s) {
      step::StepBreakdown b;
      b.step = 10 + s;
      b.start_us = 130000.0 * s + 300.0 * rank;  // rank 3 starts each step 0.9 ms late
      b.step_time_us = 100000 + 5000 * rank;
      b.compute_us = 60000;
      b.communication_us = 20000 + 4000 * rank;
      b.overlapped_us = 10000;
      b.exposed_communication_us = b.communication_us - b.overlapped_us;
      b.memory_us = 2000;
      b.idle_us = b.step_time_us - b.compute_us - b.exposed_communication_us - b.memory_us;
      steps.steps.push_back(b);
    }
    r.ranks.push_back(steps);
    step::Lane lane{rank, {}};
    for (int k = 0; k < kKernels; ++k) {
      const double at = 2500.0 * k + 100.0 * rank;
      lane.intervals.push_back({at, at + 1500, step::Activity::kCompute});
      lane.intervals.push_back(
          {at + 1200, at + 2000 + 50.0 * rank, step::Activity::kCommunication});
    }
    lane.intervals.push_back({100000, 102000, step::Activity::kMemory});
    r.swimlane.push_back(lane);
  }
  step::CollectiveInstance c;
  c.step = 12;
  c.kind = step::CollectiveKind::kReduceScatter;
  c.group = "dp";
  c.group_ranks = {0, 1, 2, 3};
  c.ranks_seen = kRanks;
  c.bytes = 64 << 20;
  c.first_rank = 0;
  c.last_rank = 3;
  c.start_skew_us = 300;
  c.duration_us = 1400;
  c.busbw_gbps = 45.3;
  c.baseline_busbw_gbps = 129.4;
  c.baseline_layer = "node";
  c.exposed_us = 800;
  c.name = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL";
  r.collectives.push_back(c);
  r.stragglers = {{12, 3, 900}, {-1, 3, 2700}};
  r.plan = {{"compute", 60000, 55000}, {"step", 115000, 100000}};
  r.plan_source = "plan.json";
  r.swimlane_step = 12;
  r.notes = {"synthetic result for the browser test"};
  return r;
}

std::string write_report() {
  std::filesystem::create_directories(kArtefacts);
  const std::string path = kArtefacts + "/step-report.html";
  std::ofstream out(path);
  report::write_step_html(result(), out);
  return path;
}

TEST(StepReportBrowser, BarsLanesAndASilentConsole) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const test::Run run = chromium("--dump-dom file://" + path, "dom");
  ASSERT_EQ(run.exit_code, 0) << "chromium (exit 124: timed out after " << kChromiumTimeoutSeconds
                              << " s)\n"
                              << run.err;
  EXPECT_EQ(count(run.out, "<svg class=\"bars\""), 1u);
  EXPECT_EQ(count(run.out, "<g class=\"bar\">"), static_cast<size_t>(kRanks * kSteps));
  EXPECT_EQ(count(run.out, "<svg class=\"lanes\""), 1u);
  EXPECT_EQ(count(run.out, "<g class=\"lane\">"), static_cast<size_t>(kRanks));
  EXPECT_EQ(count(run.out, "<figure class=\"chart\""), 2u);
  EXPECT_NE(run.out.find("<td>reducescatter</td>"), std::string::npos);
  EXPECT_NE(run.out.find("traces/rank0&lt;&amp;&gt;.json"), std::string::npos);
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
}

TEST(StepReportBrowser, Screenshot) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_report();
  const std::string png = kArtefacts + "/step-report.png";
  std::filesystem::remove(png);
  const test::Run run =
      chromium(fmt::format("--screenshot={} --window-size=1400,1600 file://{}", png, path), "shot");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << run.out << run.err;
  // A blank 1400×1600 page compresses to a few KiB; bars, lanes, tables and text do not.
  EXPECT_GT(std::filesystem::file_size(png), 50'000u);
  std::cout << "screenshot: " << png << "\n";
}

}  // namespace
}  // namespace plumb
