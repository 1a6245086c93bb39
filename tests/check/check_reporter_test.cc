#include "report/check_reporter.h"

#include <gtest/gtest.h>

#include <sstream>

#include "support/subprocess.h"

namespace plumb::check {
namespace {

NodeReport sample() {
  NodeReport r;
  r.host = "node7";
  r.created = "2026-12-07T00:00:00Z";
  r.root = "/";
  r.check_file = "site.yaml";
  r.sku = "8x H100";
  r.seconds = 0.84;
  CheckResult a = ok("8", "8");
  a.name = "accel.count";
  CheckResult b = critical("mlx5_0 (0000:3b:00.0) at x8", "x16", "reseat the card");
  b.name = "pcie.link";
  CheckResult c = warning("running (pid 812)", "not running", "stop irqbalance");
  c.name = "host.irqbalance";
  CheckResult d = skipped("no chronyc");
  d.name = "host.clock";
  r.checks = {a, b, c, d};
  return r;
}

TEST(CheckReporter, ConsoleShowsEachCheckWhatToCheckFirstAndTheVerdictLast) {
  std::ostringstream out;
  report::print_check_console(sample(), out);
  EXPECT_EQ(out.str(),
            "plumb check node: node7, site.yaml (8x H100): 3 checks in 0.8 s\n"
            "  ok        accel.count          8  [expected 8]\n"
            "  critical  pcie.link            mlx5_0 (0000:3b:00.0) at x8  [expected x16]\n"
            "                                check first: reseat the card\n"
            "  warning   host.irqbalance      running (pid 812)  [expected not running]\n"
            "                                check first: stop irqbalance\n"
            "not applicable here: host.clock (no chronyc)\n"
            "CHECK CRITICAL - node7: pcie.link: mlx5_0 (0000:3b:00.0) at x8 (expected x16)\n");
}

TEST(CheckReporter, JsonRoundTrips) {
  const nlohmann::json doc = report::check_json(sample());
  EXPECT_EQ(doc["schema"], "plumb.check/1");
  EXPECT_EQ(doc["status"], "critical");
  ASSERT_EQ(doc["checks"].size(), 3u);
  EXPECT_EQ(doc["checks"][1]["name"], "pcie.link");
  EXPECT_EQ(doc["checks"][1]["detail"], "reseat the card");
  EXPECT_EQ(doc["skipped"][0]["name"], "host.clock");
  const NodeReport back = report::check_from_json(doc, "check.json");
  EXPECT_EQ(back.status(), Status::kCritical);
  EXPECT_EQ(back.checks.size(), 4u);
  EXPECT_EQ(report::check_json(back), doc);
  nlohmann::json bad = doc;
  bad["checks"][2]["status"] = "warn";
  EXPECT_EQ(plumb::test::error_message([&] { report::check_from_json(bad, "check.json"); }),
            "check.json: checks[2].status: expected ok, warning, critical or unknown");
}

TEST(CheckReporter, TextfileForNodeExporter) {
  std::ostringstream out;
  report::write_check_textfile(sample(), out);
  EXPECT_EQ(out.str(),
            "# HELP plumb_check_status A plumb node check's status: 0 ok, 1 warning, 2 critical, 3 unknown.\n"
            "# TYPE plumb_check_status gauge\n"
            "plumb_check_status{check=\"accel.count\",category=\"accel\"} 0\n"
            "plumb_check_status{check=\"pcie.link\",category=\"pcie\"} 2\n"
            "plumb_check_status{check=\"host.irqbalance\",category=\"host\"} 1\n"
            "# HELP plumb_check_node_status The node's worst check status (0 ok, 1 warning, 2 critical, 3 unknown).\n"
            "# TYPE plumb_check_node_status gauge\n"
            "plumb_check_node_status 2\n"
            "# HELP plumb_check_duration_seconds How long the node check pass took.\n"
            "# TYPE plumb_check_duration_seconds gauge\n"
            "plumb_check_duration_seconds 0.840\n");
}

}  // namespace
}  // namespace plumb::check
