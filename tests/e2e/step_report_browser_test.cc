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
  c.name = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
  r.collectives.push_back(c);
  // A group the profiler named by an id (HCCL's communicator, PyTorch's counter or hash): named
  // by its ranks, "world" here, the id in grey.
  c.kind = step::CollectiveKind::kAllReduce;
  c.group = "17522688603477080586";
  c.exposed_us = 700;
  r.collectives.push_back(c);
  // A kernel with no process-group arguments: the analysis takes its group to be the world.
  c.kind = step::CollectiveKind::kAllGather;
  c.group.clear();
  c.group_ranks.clear();
  c.ranks_seen = 2;
  c.exposed_us = 600;
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
  // The slow collectives, named as the console names them; "ranks seen" as "n of the group".
  EXPECT_NE(run.out.find("<td class=\"group\" title=\"process group dp · 4 ranks: 0,1,2,3\">"
                         "dp(0,1,2,3)</td><td class=\"num\">4 of 4</td>"),
            std::string::npos);
  EXPECT_NE(run.out.find("<td class=\"group\" title=\"process group 17522688603477080586 · 4 "
                         "ranks: 0,1,2,3\">world(0,1,2,3)<br><span class=\"pg\">pg "
                         "17522688603477080586</span></td><td class=\"num\">4 of 4</td>"),
            std::string::npos);
  EXPECT_NE(run.out.find("<td class=\"group\" title=\"unnamed process group · its ranks are not "
                         "in the trace (taken as the whole world)\">all ranks</td><td "
                         "class=\"num\">2 of 4</td>"),
            std::string::npos);
  EXPECT_EQ(run.out.find("/0</td>"), std::string::npos);
  // The kernel without its parameter list; the whole signature in the tooltip.
  EXPECT_NE(run.out.find(">ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL</td>"), std::string::npos);
  EXPECT_NE(run.out.find("title=\"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, "
                         "unsigned long, ncclWork*)\""),
            std::string::npos);
  EXPECT_NE(run.out.find("traces/rank0&lt;&amp;&gt;.json"), std::string::npos);
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
}

// The page of real traces, as plumb step writes it, in the browser: the Ascend set's HCCL group
// is named by its id (17522688603477080586) and holds ranks 0-7 of a world no trace states; the
// Kineto pair is 2 of a 128-rank job whose kernels name no group. Neither may read "2/0".
test::Run step_page(const std::string& traces, const std::string& name) {
  const std::string dir = test::temp_dir("step-browser-" + name);
  const test::Run plumb = test::run_command(fmt::format(
      "{} step {}/traces/{} --html {}/step.html", PLUMB_BIN, PLUMB_SOURCE_DIR "/tests/fixtures",
      traces, dir));
  EXPECT_EQ(plumb.exit_code, 0) << plumb.err;
  return chromium("--dump-dom file://" + dir + "/step.html", name);
}

TEST(StepReportBrowser, RealTracesNameGroupsAndCountRanksSeen) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const test::Run ascend = step_page("ascend/pt-level1-2rank-text", "ascend");
  ASSERT_EQ(ascend.exit_code, 0) << ascend.err;
  EXPECT_EQ(count(ascend.out,
                  "<td class=\"group\" title=\"process group 17522688603477080586 · 8 ranks: "
                  "0,1,2,3,4,5,6,7\">ranks(0,1,..,7)<br><span class=\"pg\">pg "
                  "17522688603477080586</span></td><td class=\"num\">2 of 8</td>"),
            4u);
  EXPECT_EQ(page_console_lines(ascend.err), std::vector<std::string>{}) << ascend.err;
  const test::Run kineto = step_page("kineto-2ranks-of-128", "kineto");
  ASSERT_EQ(kineto.exit_code, 0) << kineto.err;
  EXPECT_EQ(count(kineto.out, "\">all ranks</td><td class=\"num\">2 of 128</td>"), 5u);
  EXPECT_EQ(count(kineto.out, "\">all ranks</td><td class=\"num\">1 of 128</td>"), 2u);
  EXPECT_EQ(kineto.out.find("/0</td>"), std::string::npos);
  EXPECT_EQ(page_console_lines(kineto.err), std::vector<std::string>{}) << kineto.err;
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
