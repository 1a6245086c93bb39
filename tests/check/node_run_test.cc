#include "check/node_run.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "check/check_file.h"
#include "check_test_support.h"
#include "common/error.h"
#include "support/subprocess.h"

namespace plumb::check {
namespace {

using plumb::test::error_message;

CheckResult fine(const NodeContext&, const CheckSection&) { return ok("1", "1"); }
CheckResult broken(const NodeContext&, const CheckSection&) {
  return critical("x8", "x16", "reseat the card");
}
CheckResult hangs(const NodeContext&, const CheckSection&) {
  std::this_thread::sleep_for(std::chrono::seconds(20));
  return ok("late");
}
CheckResult not_here(const NodeContext&, const CheckSection&) { return skipped("no NVIDIA device"); }
CheckResult reads_threshold(const NodeContext&, const CheckSection& s) {
  return ok(std::to_string(s.number("warning", {0, 100}).value_or(-1)));
}

// Static: a check the pass gave up on still runs on its detached thread after the test.
const std::vector<CheckSpec>& table() {
  static const std::vector<CheckSpec> kTable = {
      {"accel.fine", "", {}, fine, {}},
      {"pcie.broken", "", {}, broken, {}},
      {"host.hangs", "", {}, hangs, {}},
      {"host.not_here", "", {}, not_here, {}},
      {"host.threshold", "", {"warning"}, reads_threshold, {}},
  };
  return kTable;
}

NodeContext context() {
  NodeContext c;
  c.host = "node7";
  c.tool_timeout_s = 0.2;
  return c;
}

TEST(CheckNodeRun, AHungCheckIsUnknownAtItsDeadlineAndThePassGoesOn) {
  const auto start = std::chrono::steady_clock::now();
  const NodeReport r = run_node_checks(context(), CheckFile{}, {{}, {}, 0.3}, table());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_EQ(r.checks.size(), 5u);
  EXPECT_EQ(r.checks[0].name, "accel.fine");
  EXPECT_EQ(r.checks[0].status, Status::kOk);
  EXPECT_EQ(r.checks[1].status, Status::kCritical);
  EXPECT_EQ(r.checks[2].name, "host.hangs");
  EXPECT_EQ(r.checks[2].status, Status::kUnknown);
  EXPECT_EQ(r.checks[2].detail,
            "no answer within 0.3 s: a tool or a file it reads hangs (the pass went on without it)");
  EXPECT_TRUE(r.checks[3].skipped);
  // critical > warning > unknown > ok; skipped checks do not count.
  EXPECT_EQ(r.status(), Status::kCritical);
  ASSERT_EQ(r.worst().size(), 1u);
  EXPECT_EQ(r.worst()[0]->name, "pcie.broken");
}

TEST(CheckNodeRun, OnlyAndSkipTakeNamesOrCategories) {
  const NodeReport only = run_node_checks(context(), CheckFile{}, {{"accel", "pcie.broken"}, {}, 1}, table());
  ASSERT_EQ(only.checks.size(), 2u);
  EXPECT_EQ(only.checks[1].name, "pcie.broken");
  const NodeReport skip = run_node_checks(context(), CheckFile{}, {{}, {"host"}, 1}, table());
  EXPECT_EQ(skip.checks.size(), 2u);
}

TEST(CheckNodeRun, TheCheckFileSectionReachesItsCheckAndEnabledFalseLeavesItOut) {
  CheckFile file;
  file.source = "site.yaml";
  file.checks = YAML::Load("host.threshold: {warning: 42}\npcie.broken: {enabled: false}\n");
  const NodeReport r = run_node_checks(context(), file, {{}, {"host.hangs"}, 1}, table());
  ASSERT_EQ(r.checks.size(), 3u);
  EXPECT_EQ(r.checks[2].name, "host.threshold");
  EXPECT_EQ(r.checks[2].value, "42.000000");
  EXPECT_EQ(r.status(), Status::kOk);
}

TEST(CheckNodeRun, ABadValueInTheCheckFileIsOneErrorNamingFileLineAndKey) {
  CheckFile file;
  file.source = "site.yaml";
  file.checks = YAML::Load("host.threshold:\n  warning: hot\n");
  EXPECT_EQ(error_message([&] { run_node_checks(context(), file, {{"host.threshold"}, {}, 1}, table()); }),
            "site.yaml:2: checks.host.threshold.warning: must be a number from 0 to 100, got 'hot'");
}

TEST(CheckNodeRun, UnknownNamesInOnlyAndSkipAreRefused) {
  EXPECT_EQ(error_message([] { check_selection({"hostt"}, "--only"); }),
            "--only 'hostt': no check or category of that name (did you mean 'host'?); `plumb check "
            "list` shows them");
  check_selection({"host", "host.irqbalance", "versions"}, "--skip");
}

}  // namespace
}  // namespace plumb::check
