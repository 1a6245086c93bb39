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
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::string kArtefacts = PLUMB_ARTEFACT_DIR;
constexpr int kChromiumTimeoutSeconds = 120;  // a cold start on a 2-core VM takes 3 to 5 s
constexpr int kRanks = 4;
constexpr int kSteps = 3;
constexpr int kKernels = 40;  // per rank in the swimlane step: compute, then its all-reduce

std::string chromium_missing() {
  if (test::run_command("command -v chromium").exit_code == 0) return "";
  return "chromium is not installed: run scripts/install-deps (it installs Debian's chromium, "
         "which the HTML reports' browser tests need)";
}

test::Run chromium(const std::string& args, const std::string& name) {
  const std::string profile = test::temp_dir("chromium-profile-step-" + name);
  return test::run_command(fmt::format(
      "timeout {} chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--user-data-dir={} --enable-logging=stderr --v=0 {}",
      kChromiumTimeoutSeconds, profile, args));
}

// Lines where the page spoke on its console or threw (report_browser_test.cc shows the format
// and checks that the filter catches both).
std::vector<std::string> page_console_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

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
