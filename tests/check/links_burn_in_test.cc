#include "check/burn_in.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "report/check_reporter.h"

namespace plumb::check {
namespace {

comm::Row row(double busbw, int64_t wrong = 0) {
  comm::Row r;
  r.layer = "world";
  r.collective = "allreduce";
  r.group_ranks = 8;
  r.requested_bytes = 64ull << 20;
  r.bytes = r.requested_bytes;
  r.busbw_gbps = busbw;
  r.wrong = wrong;
  return r;
}

BurnInJudgement judgement(double threshold) {
  BurnInJudgement j;
  j.bytes = 64ull << 20;
  j.busbw_gbps = threshold;
  return j;
}

TEST(LinksBurnIn, BusbwAgainstTheThreshold) {
  const comm::Row fast = row(470.2);
  const CheckResult good = judge_busbw(&fast, judgement(460));
  EXPECT_EQ(good.status, Status::kOk);
  EXPECT_EQ(good.value, "allreduce busbw 470.20 GB/s at 64 MiB over 8 ranks");
  EXPECT_EQ(good.expected, "≥ 460.00 GB/s");
  const comm::Row slow = row(301.5);
  const CheckResult bad = judge_busbw(&slow, judgement(460));
  EXPECT_EQ(bad.status, Status::kCritical);
  EXPECT_EQ(bad.detail, "check the slowest link first: plumb comm --layers node and nvidia-smi topo -m");
  // No threshold: recorded.
  EXPECT_EQ(judge_busbw(&slow, judgement(0)).status, Status::kOk);
  EXPECT_EQ(judge_busbw(&slow, judgement(0)).expected, "");
}

TEST(LinksBurnIn, WrongDataIsCriticalWhateverTheSpeed) {
  const comm::Row wrong = row(900, 3);
  const CheckResult r = judge_busbw(&wrong, judgement(460));
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value, "allreduce busbw 900.00 GB/s at 64 MiB over 8 ranks: 3 wrong element(s)");
}

TEST(LinksBurnIn, OneRankIsSkipped) {
  const CheckResult r = judge_busbw(nullptr, judgement(460));
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.detail, "one rank: no data crossed a link; start it under mpirun with one rank per "
                      "accelerator, e.g. mpirun -np 8 plumb check burn-in");
}

TEST(LinksBurnIn, AgainstTheBaseline) {
  BurnInJudgement j = judgement(0);
  const comm::Row now = row(400);
  EXPECT_EQ(judge_baseline(&now, j).detail, "no --baseline given");
  j.baseline_name = "baseline 7";
  EXPECT_EQ(judge_baseline(&now, j).detail,
            "baseline 7 has no allreduce row at 64 MiB on layer world over these ranks");
  j.baseline_row = row(480);
  const CheckResult below = judge_baseline(&now, j);
  EXPECT_EQ(below.status, Status::kWarning);
  EXPECT_EQ(below.expected, "≥ 90% of 480.00 GB/s (baseline 7)");
  const comm::Row close = row(440);
  EXPECT_EQ(judge_baseline(&close, j).status, Status::kOk);
}

// This machine has no CUDA runtime: the check says so and is skipped, not failed.
TEST(LinksBurnIn, HostToDeviceWithoutTheRuntimeIsSkipped) {
  setenv("PLUMB_CUDART_LIBRARY", "libcudart-not-here.so", 1);
  const CheckResult r = measure_h2d(1 << 20, 0, 0);
  unsetenv("PLUMB_CUDART_LIBRARY");
  EXPECT_TRUE(r.skipped);
  EXPECT_TRUE(r.detail.starts_with("no CUDA runtime: host↔device bandwidth not measured (")) << r.detail;
}

TEST(LinksBurnIn, TheReportIsAPlumbCheckRecord) {
  const comm::Row slow = row(301.5);
  const NodeReport report = burn_in_report(
      "gpu-007", "2026-12-07T00:00:00Z", 12.5,
      {judge_busbw(&slow, judgement(460)), judge_baseline(&slow, judgement(0)), skipped("no CUDA runtime")});
  EXPECT_EQ(report.status(), Status::kCritical);
  const nlohmann::json j = report::check_json(report);
  EXPECT_EQ(j["schema"], "plumb.check/1");
  EXPECT_EQ(j["host"], "gpu-007");
  ASSERT_EQ(j["checks"].size(), 1u);
  EXPECT_EQ(j["checks"][0]["name"], "burn_in.busbw");
  EXPECT_EQ(j["checks"][0]["status"], "critical");
  ASSERT_EQ(j["skipped"].size(), 2u);
  EXPECT_EQ(j["skipped"][0]["name"], "burn_in.baseline");
  EXPECT_EQ(j["skipped"][0]["reason"], "no --baseline given");
  EXPECT_EQ(j["skipped"][1]["name"], "burn_in.h2d");
}

}  // namespace
}  // namespace plumb::check
