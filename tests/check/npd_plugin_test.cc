// plumb check node --npd: node-problem-detector's exit statuses and its one message line, and the
// monitor config under contrib/npd that runs it.
#include "check/npd_plugin.h"

#include <gtest/gtest.h>

#include "common/json.h"
#include "support/subprocess.h"

namespace plumb::check {
namespace {

CheckResult result(const std::string& name, Status status, const std::string& value) {
  CheckResult r;
  r.name = name;
  r.status = status;
  r.value = value;
  return r;
}

NodeReport report_of(std::vector<CheckResult> checks) {
  NodeReport r;
  r.host = "node7";
  r.checks = std::move(checks);
  return r;
}

TEST(NpdPlugin, AHealthyNodeIsOk) {
  const NpdResult r = npd_result(
      report_of({result("accel.count", Status::kOk, "8"), result("pcie.link", Status::kOk, "x16")}),
      Status::kCritical, kNpdDefaultMaxOutput);
  EXPECT_EQ(r.status, NpdStatus::kOk);
  EXPECT_EQ(r.message, "ok: 2 checks passed");
}

TEST(NpdPlugin, ACriticalIsNonOkNamingTheCheck) {
  const NpdResult r = npd_result(report_of({result("pcie.link", Status::kCritical, "mlx5_0 at x8"),
                                            result("net.port", Status::kCritical, "ib0 down")}),
                                 Status::kCritical, kNpdDefaultMaxOutput);
  EXPECT_EQ(r.status, NpdStatus::kNonOk);
  EXPECT_EQ(r.message, "critical: pcie.link: mlx5_0 at x8 (+1 more)");
  EXPECT_EQ(static_cast<int>(r.status), 1);
}

TEST(NpdPlugin, AWarningIsNonOkOnlyWhenAskedFor) {
  const NodeReport warned = report_of({result("host.irqbalance", Status::kWarning, "running")});
  EXPECT_EQ(npd_result(warned, Status::kCritical, 80).status, NpdStatus::kOk);
  EXPECT_EQ(npd_result(warned, Status::kCritical, 80).message, "warning: host.irqbalance: running");
  EXPECT_EQ(npd_result(warned, Status::kWarning, 80).status, NpdStatus::kNonOk);
}

TEST(NpdPlugin, ACheckThatCouldNotBeJudgedIsUnknown) {
  CheckResult hung = result("accel.health", Status::kUnknown, "");
  hung.detail = "nvidia-smi: no answer within 5 s (stopped)";
  const NpdResult r =
      npd_result(report_of({hung, result("pcie.link", Status::kOk, "x16")}), Status::kCritical, 80);
  EXPECT_EQ(r.status, NpdStatus::kUnknown);
  EXPECT_EQ(static_cast<int>(r.status), 2);
  EXPECT_EQ(r.message, "unknown: could not judge accel.health");
}

TEST(NpdPlugin, TheMessageFitsMaxOutputLengthAtAWholeCharacter) {
  const NodeReport hot =
      report_of({result("accel.temperature", Status::kCritical,
                        "GPU 3 at 97 °C, GPU 5 at 96 °C, GPU 6 at 99 °C, GPU 7 at 101 °C")});
  const NpdResult r = npd_result(hot, Status::kCritical, kNpdDefaultMaxOutput);
  EXPECT_EQ(r.message,
            "critical: accel.temperature: GPU 3 at 97 °C, GPU 5 at 96 °C, GPU 6 at 99 °...");
  EXPECT_EQ(r.message.size(), kNpdDefaultMaxOutput);
  // One byte less would cut the '°' (2 bytes in UTF-8) in half: it goes whole.
  EXPECT_EQ(npd_result(hot, Status::kCritical, 79).message,
            "critical: accel.temperature: GPU 3 at 97 °C, GPU 5 at 96 °C, GPU 6 at 99 ...");
  EXPECT_EQ(npd_result(hot, Status::kCritical, 31).message, "critical: accel.temperature:...");
}

// The config a site pastes: NPD's custom plugin monitor schema, the rule running plumb with --npd,
// its timeout within the global one (NPD refuses to start otherwise), max_output_length NPD's.
TEST(NpdPlugin, TheContribMonitorConfigRunsPlumbWithNpd) {
  const std::string path = std::string(PLUMB_SOURCE_DIR) + "/contrib/npd/plumb-check-monitor.json";
  const nlohmann::json doc = parse_json(test::read_file(path), path);
  EXPECT_EQ(doc["plugin"], "custom");
  EXPECT_EQ(doc["pluginConfig"]["max_output_length"], kNpdDefaultMaxOutput);
  EXPECT_EQ(doc["pluginConfig"]["timeout"], "30s");
  EXPECT_EQ(doc["conditions"][0]["type"], "PlumbCheckProblem");
  const nlohmann::json& rule = doc["rules"][0];
  EXPECT_EQ(rule["type"], "permanent");
  EXPECT_EQ(rule["condition"], "PlumbCheckProblem");
  EXPECT_EQ(rule["path"], "/usr/bin/plumb");
  EXPECT_EQ(rule["args"], parse_json(R"(["check", "node", "--npd", "--root", "/host", "--config",
      "/etc/plumb/check.yaml", "--timeout", "5"])",
                                     "args"));
  EXPECT_EQ(rule["timeout"], "30s");
}

}  // namespace
}  // namespace plumb::check
