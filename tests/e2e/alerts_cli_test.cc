// plumb alerts rules|test and plumb dashboard end to end, checked by the real promtool (Debian
// package prometheus): the rule file loads, the generated unit tests pass against it with the
// default and with changed thresholds (and fail against rules made with other thresholds), the
// dashboard's every expression parses, the real exporter samples give plumb: series with the right
// host and device, and bad flag values get one exact message and exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;

test::Run in_dir(const std::string& dir, const std::string& command) {
  // In a subshell: run_command redirects the whole line's output, which would override the
  // command's own "> FILE".
  return run_command("(cd '" + dir + "' && " + command + ")");
}

bool have_promtool() { return run_command("command -v promtool").exit_code == 0; }

#define REQUIRE_PROMTOOL() \
  if (!have_promtool()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)"

TEST(AlertsCli, RulesPassPromtoolCheck) {
  REQUIRE_PROMTOOL();
  const std::string dir = temp_dir("alerts_rules_check");
  const test::Run rules = in_dir(dir, kPlumb + " alerts rules > r.yml");
  ASSERT_EQ(rules.exit_code, 0) << rules.err;
  const test::Run check = in_dir(dir, "promtool check rules r.yml");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("SUCCESS: 23 rules found"), std::string::npos) << check.out;
}

// Writes rules and tests with the given flags into `dir` and runs promtool test rules.
test::Run generated_tests(const std::string& dir, const std::string& rule_flags,
                    const std::string& test_flags) {
  const test::Run rules = in_dir(dir, kPlumb + " alerts rules " + rule_flags + " -o r.yml");
  EXPECT_EQ(rules.exit_code, 0) << rules.err;
  const test::Run tests = in_dir(dir, kPlumb + " alerts test " + test_flags + " --rules r.yml -o t.yml");
  EXPECT_EQ(tests.exit_code, 0) << tests.err;
  return in_dir(dir, "promtool test rules t.yml");
}

TEST(AlertsCli, GeneratedTestsPassWithDefaults) {
  REQUIRE_PROMTOOL();
  const test::Run r = generated_tests(temp_dir("alerts_test_defaults"), "", "");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS"), std::string::npos) << r.out;
}

TEST(AlertsCli, GeneratedTestsFollowChangedThresholds) {
  REQUIRE_PROMTOOL();
  const std::string flags =
      "--hbm-ratio 0.8 --temp-warn 80 --temp-crit 90 --temp-for 2m --bandwidth-min-gbps 100 "
      "--bandwidth-collectives allreduce,allgather --op-jitter 1 --step-for 0s "
      "--restarts-max 1 --restart-window 10m --restart-for 30s --xid-codes 79,48 --xid-for 1m "
      "--link-window 2m --link-errors-max 5 --link-flaps-max 1";
  const test::Run r = generated_tests(temp_dir("alerts_test_changed"), flags, flags);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(AlertsCli, GeneratedTestsFailAgainstOtherThresholds) {
  REQUIRE_PROMTOOL();
  // Tests for --temp-warn 80 against rules with 85: the hot device at 80 °C does not fire.
  const test::Run r = generated_tests(temp_dir("alerts_test_mismatch"), "", "--temp-warn 80");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("PlumbDeviceHot"), std::string::npos) << r.out << r.err;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(DashboardCli, EveryExpressionPassesPromtool) {
  REQUIRE_PROMTOOL();
  const std::string dir = temp_dir("dashboard_check");
  const test::Run d = in_dir(dir, kPlumb + " dashboard --title 'GPU farm' --uid farm-1 -o d.json");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const nlohmann::json board = nlohmann::json::parse(read_file(dir + "/d.json"));
  EXPECT_EQ(board["title"], "GPU farm");
  EXPECT_EQ(board["uid"], "farm-1");
  // Grafana's variables replaced by what Grafana would put there, then each expression made a
  // recording rule so that promtool parses it.
  std::string rules = "groups:\n  - name: dashboard\n    rules:\n";
  int n = 0;
  for (const nlohmann::json& panel : board["panels"]) {
    if (!panel.contains("targets")) continue;
    for (const nlohmann::json& t : panel["targets"]) {
      std::string expr = t["expr"].get<std::string>();
      for (const auto& [var, value] : {std::pair{"$__rate_interval", "1m"}, {"$__interval", "15s"},
                                       {"$host", "gpu-a|gpu-b"}, {"$device", ".*"}}) {
        expr = replace_all(expr, var, value);
      }
      EXPECT_EQ(expr.find('$'), std::string::npos) << expr;
      rules += "      - record: plumb_dashboard:panel_" + std::to_string(n++) + "\n        expr: '" +
               replace_all(expr, "'", "''") + "'\n";
    }
  }
  EXPECT_EQ(n, 45);
  write_file(dir + "/panels.yml", rules);
  const test::Run check = in_dir(dir, "promtool check rules panels.yml");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

// Issue 32: the bandwidth panels show the slow link. Two hosts reach the same busbw at 1 MiB;
// at 1 GiB one reaches 40e9 B/s and the other 5e9: the panel's min is 5e9 (each link's best
// message size, then the slowest link), where the board's old max by (layer, collective) read
// 40e9 and hid it. Evaluated by the real promtool on the expressions the board holds.
TEST(DashboardCli, BandwidthPanelsShowTheSlowLink) {
  REQUIRE_PROMTOOL();
  const std::string dir = temp_dir("dashboard_bandwidth");
  ASSERT_EQ(in_dir(dir, kPlumb + " dashboard -o d.json").exit_code, 0);
  const nlohmann::json board = nlohmann::json::parse(read_file(dir + "/d.json"));
  std::vector<std::string> tail, slowest;
  for (const nlohmann::json& panel : board["panels"]) {
    for (const nlohmann::json& t : panel.value("targets", nlohmann::json::array())) {
      if (panel["title"] == "Collective busbw per layer: slowest links") tail.push_back(t["expr"]);
      if (panel["title"] == "Slowest 5 links") slowest.push_back(t["expr"]);
    }
  }
  ASSERT_EQ(tail.size(), 3u);
  ASSERT_EQ(slowest.size(), 1u);
  auto series = [](const char* bytes, const char* host, const char* value) {
    return std::string("      - series: 'plumb_comm_busbw_bytes_per_second{layer=\"inter-node\",") +
           "collective=\"allreduce\",bytes=\"" + bytes + "\",source=\"probe\",instance=\"" + host +
           ":9464\"}'\n        values: '" + value + "x4'\n";
  };
  auto expect = [](const std::string& expr, const std::string& samples) {
    return "      - expr: '" + expr + "'\n        eval_time: 30s\n        exp_samples:\n" + samples;
  };
  const std::string layer = "'{layer=\"inter-node\",collective=\"allreduce\"}'";
  const std::string tests =
      "tests:\n  - interval: 15s\n    input_series:\n" + series("1048576", "fast", "1e9") +
      series("1073741824", "fast", "40e9") + series("1048576", "slow", "1e9") +
      series("1073741824", "slow", "5e9") + "    promql_expr_test:\n" +
      expect(tail[0], "          - labels: " + layer + "\n            value: 5e9\n") +
      expect(tail[1], "          - labels: " + layer + "\n            value: 6.75e9\n") +
      expect(slowest[0],
             "          - labels: '{layer=\"inter-node\",collective=\"allreduce\",instance=\"slow:9464\"}'\n"
             "            value: 5e9\n"
             "          - labels: '{layer=\"inter-node\",collective=\"allreduce\",instance=\"fast:9464\"}'\n"
             "            value: 40e9\n");
  write_file(dir + "/t.yml", tests);
  const test::Run r = in_dir(dir, "promtool test rules t.yml");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << tests;
}

// The samples of a .prom file as promtool input series, each held for a minute; `rename` and
// `extra` change the metric name and add labels (what Prometheus adds when it scrapes).
std::string input_series(const std::string& path, const std::string& rename = "",
                         const std::string& extra = "") {
  std::istringstream in(read_file(path));
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t close = line.rfind('}');
    if (close == std::string::npos) continue;  // a sample without labels (machine_npu_nums)
    std::string series = line.substr(0, close);
    const size_t open = series.find('{');
    if (!rename.empty()) series = rename + series.substr(open);
    if (!extra.empty()) series += "," + extra;
    std::istringstream rest(line.substr(close + 1));
    std::string value;
    rest >> value;
    out += "      - series: '" + series + "}'\n        values: '" + value + "x4'\n";
  }
  return out;
}

TEST(AlertsCli, RealExporterSamplesGiveHostAndDevice) {
  REQUIRE_PROMTOOL();
  const std::string dir = temp_dir("alerts_fixtures");
  ASSERT_EQ(in_dir(dir, kPlumb + " alerts rules -o r.yml").exit_code, 0);
  const std::string fixtures = std::string(PLUMB_TEST_FIXTURES) + "/exporter/";
  // The npu-exporter sample's one labelled series is the AI Core frequency; its labels (the new
  // label set) are put on npu_chip_info_temperature here, with the scrape's instance label.
  const std::string tests =
      "rule_files: [r.yml]\nevaluation_interval: 15s\ntests:\n  - interval: 15s\n"
      "    input_series:\n" +
      input_series(fixtures + "dcgm_exporter_sample.prom") +
      input_series(fixtures + "npu_exporter_sample.prom", "npu_chip_info_temperature",
                   "instance=\"npu-node-7:9101\"") +
      "    promql_expr_test:\n      - expr: plumb:device_temperature_celsius\n"
      "        eval_time: 30s\n        exp_samples:\n"
      "          - labels: 'plumb:device_temperature_celsius{host=\"dcgm-exporter-wwwjh\",device=\"1\"}'\n"
      "            value: 44\n"
      "          - labels: 'plumb:device_temperature_celsius{host=\"dcgm-exporter-wwwjh\",device=\"2\"}'\n"
      "            value: 45\n"
      "          - labels: 'plumb:device_temperature_celsius{host=\"npu-node-7\",device=\"0\"}'\n"
      "            value: 1000\n";
  write_file(dir + "/t.yml", tests);
  const test::Run r = in_dir(dir, "promtool test rules t.yml");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << tests;
}

TEST(AlertsCli, BadFlagValuesExitTwoWithOneMessage) {
  const test::Run r = run_command(kPlumb + " alerts rules --bandwidth-for 30x --hbm-ratio 1.2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "plumb: error: --hbm-ratio 1.2: expected a ratio in (0, 1]\n"
            "--bandwidth-for '30x': expected a Prometheus duration such as 30s, 5m or 1h\n");
  const test::Run t = run_command(kPlumb + " alerts test --temp-warn 99");
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_EQ(t.err, "plumb: error: --temp-warn 99 must be below --temp-crit 95\n");
  const test::Run d = run_command(kPlumb + " dashboard --uid 'a b'");
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_EQ(d.err,
            "plumb: error: --uid 'a b': expected 1 to 40 letters, digits, '-' or '_' (a Grafana "
            "dashboard uid)\n");
}

TEST(AlertsCli, UsageErrorsFromCli11) {
  const test::Run none = run_command(kPlumb + " alerts");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("plumb: error: A subcommand is required"), std::string::npos) << none.err;
  const test::Run unknown = run_command(kPlumb + " alerts rules --hbm-ratoi 0.8");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--hbm-ratoi"), std::string::npos) << unknown.err;
  const test::Run nan = run_command(kPlumb + " alerts rules --temp-warn hot");
  EXPECT_EQ(nan.exit_code, 2);
  EXPECT_NE(nan.err.find("--temp-warn"), std::string::npos) << nan.err;
}

}  // namespace
}  // namespace plumb::test
