// The rule generator: exact expressions of a few rules, every option's error message, the
// Prometheus duration parser and the template expansion the unit-test generator relies on.
#include "exporter/rules.h"

#include <gtest/gtest.h>

#include <tuple>

#include "common/regex.h"
#include "exporter/dashboard.h"
#include "exporter/rule_tests.h"
#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

const AlertRule& find(const std::vector<AlertRule>& rules, const std::string& name) {
  for (const AlertRule& r : rules) {
    if (r.name == name) return r;
  }
  throw std::runtime_error("no rule " + name);
}

TEST(AlertRules, ExpressionsUseTheOptions) {
  AlertOptions o;
  o.hbm_ratio = 0.8;
  o.temp_warn = 80;
  const std::vector<AlertRule> rules = alert_rules(o);
  EXPECT_EQ(find(rules, "PlumbHbmHigh").expr,
            "plumb:device_hbm_used_bytes / plumb:device_hbm_total_bytes > 0.8");
  EXPECT_EQ(find(rules, "PlumbHbmHigh").for_duration, "5m");
  EXPECT_EQ(find(rules, "PlumbDeviceHot").expr, "plumb:device_temperature_celsius >= 80");
  EXPECT_EQ(find(rules, "PlumbDeviceThrottling").expr, "plumb:device_temperature_celsius >= 95");
  EXPECT_EQ(find(rules, "PlumbDeviceThrottling").severity, "critical");
  EXPECT_EQ(find(rules, "PlumbOperatorSlow").expr, "plumb_train_operator_ratio > 3");
  EXPECT_EQ(find(rules, "PlumbStepSlow").expr, "plumb_train_step_ratio > 1.5");
  EXPECT_EQ(find(rules, "PlumbDeviceUnhealthy").expr, "plumb:device_healthy == 0");
  EXPECT_EQ(rules.size(), 14u);
}

// Issue 32: an Xid fires only when its code is on --xid-codes, each code one comparison whose
// value is the code (the summary names it).
TEST(AlertRules, XidErrorOnlyForListedCodes) {
  AlertOptions o;
  o.xid_codes = "48, 79,94";
  const AlertRule r = find(alert_rules(o), "PlumbXidError");
  EXPECT_EQ(r.expr,
            "plumb:device_xid_code == 48\nor plumb:device_xid_code == 79\n"
            "or plumb:device_xid_code == 94");
  EXPECT_EQ(r.severity, "critical");
  EXPECT_EQ(r.for_duration, "0s");
  EXPECT_EQ(expand_template(r.annotations[0].second, {{"host", "gpu-7"}, {"device", "3"}}, 79),
            "gpu-7 GPU 3 reported Xid 79");
  // The default list: NVIDIA's catalog codes that need an operator.
  EXPECT_EQ(xid_code_list(AlertOptions{}.xid_codes),
            (std::vector<int>{13, 31, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119,
                              120, 140}));
}

TEST(AlertRules, EccAndRowRemapOnTheirRecords) {
  const std::vector<AlertRule> rules = alert_rules({});
  EXPECT_EQ(find(rules, "PlumbEccUncorrectable").expr,
            "plumb:device_ecc_uncorrectable_errors > 0");
  EXPECT_EQ(find(rules, "PlumbRowRemapFailed").expr, "plumb:device_row_remap_failed > 0");
  const std::vector<RecordingRule> rec = recording_rules();
  ASSERT_EQ(rec.size(), 9u);
  EXPECT_EQ(rec[6].record, "plumb:device_xid_code");
  EXPECT_EQ(rec[7].record, "plumb:device_ecc_uncorrectable_errors");
  EXPECT_EQ(rec[8].record, "plumb:device_row_remap_failed");
  for (const char* spelling : {"label_join(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, ",
                               "label_join(dcgm_ecc_dbe_volatile_total, ",
                               "label_join(npu_chip_info_hbm_ecc_double_bit_error_cnt, "}) {
    EXPECT_NE(rec[7].expr.find(spelling), std::string::npos) << spelling;
  }
  EXPECT_NE(rec[7].expr.find(R"~("device", "$1", "id", "(.+)")~"), std::string::npos);
  EXPECT_LT(rec[8].expr.find("DCGM_FI_DEV_ROW_REMAP_FAILED"),
            rec[8].expr.find("DCGM_FI_DEV_ROW_REMAP_FAILURE"));
}

// Link counters: the increase over --link-window of every spelling, summed per host and device;
// the IB port joins its HCA ("mlx5_0/1"); carrier_changes counts both edges of a flap.
TEST(AlertRules, LinkCountersOverTheWindow) {
  AlertOptions o;
  o.link_window = "5m";
  o.link_errors_max = 2;
  const std::vector<AlertRule> rules = alert_rules(o);
  const AlertRule& nvlink = find(rules, "PlumbNvlinkErrors");
  EXPECT_TRUE(nvlink.expr.starts_with("sum by (host, device) (\n")) << nvlink.expr;
  EXPECT_TRUE(nvlink.expr.ends_with("\n) > 2")) << nvlink.expr;
  for (const char* counter : {"increase(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL[5m])",
                              "increase(DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL[5m])",
                              "increase(DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL[5m])",
                              "increase(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL[5m])",
                              "increase(dcgm_nvlink_flit_crc_error_count_total[5m])"}) {
    EXPECT_NE(nvlink.expr.find(counter), std::string::npos) << counter;
  }
  const AlertRule& nic = find(rules, "PlumbNicErrors");
  EXPECT_NE(nic.expr.find(R"(label_join(increase(node_infiniband_symbol_error_total[5m]), )"
                          R"("device", "/", "device", "port"))"),
            std::string::npos);
  EXPECT_NE(nic.expr.find("increase(npu_chip_roce_rx_err_pkt_num[5m])"), std::string::npos);
  const AlertRule& flap = find(rules, "PlumbLinkFlapping");
  EXPECT_NE(flap.expr.find("(increase(node_network_carrier_down_changes_total[5m]) or "
                           "increase(node_network_carrier_changes_total[5m]) / 2)"),
            std::string::npos);
  EXPECT_TRUE(flap.expr.ends_with(" > 0")) << flap.expr;
  EXPECT_EQ(flap.severity, "critical");
  EXPECT_EQ(expand_template(flap.annotations[0].second, {{"host", "n1"}, {"device", "mlx5_0/1"}}, 2),
            "n1 mlx5_0/1: 2 link-down events in 5m (more than 0)");
}

TEST(AlertOptionsCheck, FaultOptions) {
  AlertOptions o;
  o.xid_codes = "48,x9";
  o.xid_for = "soon";
  o.link_window = "30s";
  o.link_errors_max = -1;
  o.link_flaps_max = -3;
  EXPECT_EQ(test::error_message([&] { validate_alert_options(o); }),
            "--xid-codes '48,x9': expected a comma list of Xid codes, whole numbers 1 to 999\n"
            "--xid-for 'soon': expected a Prometheus duration such as 30s, 5m or 1h\n"
            "--link-window '30s': expected 1m or more (increase() needs several scrapes in it)\n"
            "--link-errors-max -1: expected 0 or more\n"
            "--link-flaps-max -3: expected 0 or more");
  EXPECT_FALSE(xid_code_list(""));
  EXPECT_FALSE(xid_code_list("0"));
  EXPECT_FALSE(xid_code_list("1000"));
  EXPECT_EQ(xid_code_list(" 79 "), std::vector<int>{79});
}

TEST(AlertRules, BandwidthFloorIsGbitPerSecondInBytes) {
  EXPECT_EQ(gbps_to_bytes_per_second(10), 1.25e9);  // 10e9 bit/s / 8
  const AlertRule bw = find(alert_rules({}), "PlumbCollectiveBandwidthLow");
  EXPECT_NE(bw.expr.find(R"(plumb_comm_busbw_bytes_per_second{collective=~"allreduce"})"),
            std::string::npos);
  EXPECT_TRUE(bw.expr.ends_with(" < 1250000000")) << bw.expr;
  EXPECT_EQ(bw.for_duration, "30s");
}

TEST(AlertRules, RestartLoopCountsRoundedIncrease) {
  AlertOptions o;
  o.restarts_max = 5;
  o.restart_window = "2h";
  const AlertRule r = find(alert_rules(o), "PlumbRestartLoop");
  EXPECT_NE(r.expr.find("round(increase(plumb_run_restarts_total[2h]))"), std::string::npos);
  EXPECT_TRUE(r.expr.ends_with(" > 5")) << r.expr;
}

TEST(RecordingRules, TemperatureFromEverySpellingInOrder) {
  const std::vector<RecordingRule> rules = recording_rules();
  ASSERT_EQ(rules.size(), 9u);
  const RecordingRule& t = rules[2];
  EXPECT_EQ(t.record, "plumb:device_temperature_celsius");
  const std::string host =
      R"("plumb_host_src", "|", "host", "hostname", "Hostname", "instance"), "host", "$1", )"
      R"("plumb_host_src", "[|]*([^|]+?)(?::[0-9]+)?(?:[|].*)?"), "plumb_host_src", "", "", ""))";
  auto part = [&](const char* metric, const char* device) {
    return std::string("max by (host, device) (label_replace(label_replace(label_replace(label_join(") +
           metric + ", " + host + ", \"device\", \"$1\", \"" + device + "\", \"(.+)\"))";
  };
  EXPECT_EQ(t.expr, part("DCGM_FI_DEV_GPU_TEMP_CELSIUS", "gpu") + "\nor\n" +
                        part("DCGM_FI_DEV_GPU_TEMP", "gpu") + "\nor\n" + part("dcgm_gpu_temp", "gpu") +
                        "\nor\n" + part("npu_chip_info_temperature", "id") + "\nor\n" +
                        part("plumb_device_temperature_celsius", "device"));
}

// dcgm-exporter 4.9 (DCGM 4.7 names): bytes and a 0-1 ratio are taken as they are, and its health
// fields are read under their new names; the MiB and % spellings before 4.9 keep their factors.
TEST(RecordingRules, DcgmExporter49NamesNeedNoConversion) {
  const std::vector<RecordingRule> rules = recording_rules();
  ASSERT_EQ(rules.size(), 9u);
  EXPECT_NE(rules[0].expr.find("label_join(DCGM_FI_DEV_FB_USED_BYTES, "), std::string::npos);
  EXPECT_EQ(rules[0].expr.find("DCGM_FI_DEV_FB_USED_BYTES *"), std::string::npos);
  EXPECT_NE(rules[1].expr.find("label_join((DCGM_FI_DEV_FB_CAPACITY_BYTES or "
                               "DCGM_FI_DEV_FB_USED_BYTES + DCGM_FI_DEV_FB_FREE_BYTES + "
                               "(DCGM_FI_DEV_FB_RESERVED_BYTES or DCGM_FI_DEV_FB_USED_BYTES * 0)), "),
            std::string::npos);
  EXPECT_NE(rules[3].expr.find("label_join(DCGM_FI_DEV_BOARD_POWER_WATTS, "), std::string::npos);
  EXPECT_NE(rules[4].expr.find("label_join(DCGM_FI_DEV_GPU_UTIL_RATIO, "), std::string::npos);
  EXPECT_EQ(rules[4].expr.find("DCGM_FI_DEV_GPU_UTIL_RATIO /"), std::string::npos);
  EXPECT_NE(rules[5].expr.find(R"(label_replace(DCGM_FI_DEV_XID_ERROR == bool 0, "plumb_check", )"
                               R"("xid", "", "") or label_replace(DCGM_FI_DEV_ROW_REMAP_FAILED == )"
                               R"(bool 0, "plumb_check", "row_remap", "", ""))"),
            std::string::npos);
  // The 4.9 spelling comes first in its record, before the one it replaced.
  const std::vector<std::tuple<size_t, std::string, std::string>> pairs = {
      {0, "DCGM_FI_DEV_FB_USED_BYTES", "DCGM_FI_DEV_FB_USED *"},
      {1, "DCGM_FI_DEV_FB_CAPACITY_BYTES", "DCGM_FI_DEV_FB_TOTAL"},
      {2, "DCGM_FI_DEV_GPU_TEMP_CELSIUS", "DCGM_FI_DEV_GPU_TEMP,"},
      {3, "DCGM_FI_DEV_BOARD_POWER_WATTS", "DCGM_FI_DEV_POWER_USAGE"},
      {4, "DCGM_FI_DEV_GPU_UTIL_RATIO", "DCGM_FI_DEV_GPU_UTIL /"},
      {5, "DCGM_FI_DEV_ROW_REMAP_FAILED", "DCGM_FI_DEV_ROW_REMAP_FAILURE"}};
  for (const auto& [i, now, before] : pairs) {
    ASSERT_NE(rules[i].expr.find(before), std::string::npos) << before;
    EXPECT_LT(rules[i].expr.find(now), rules[i].expr.find(before)) << now;
  }
}

TEST(RecordingRules, UnitConversions) {
  const std::vector<RecordingRule> rules = recording_rules();
  EXPECT_NE(rules[0].expr.find("label_join(DCGM_FI_DEV_FB_USED * 1048576,"), std::string::npos);
  EXPECT_NE(rules[0].expr.find("label_join(npu_chip_info_hbm_used_memory * 1048576,"),
            std::string::npos);
  EXPECT_NE(rules[1].expr.find("label_join((DCGM_FI_DEV_FB_TOTAL or DCGM_FI_DEV_FB_USED + "
                               "DCGM_FI_DEV_FB_FREE + (DCGM_FI_DEV_FB_RESERVED or "
                               "DCGM_FI_DEV_FB_USED * 0)) * 1048576,"),
            std::string::npos);
  EXPECT_NE(rules[4].expr.find("label_join(DCGM_FI_DEV_GPU_UTIL / 100,"), std::string::npos);
  EXPECT_NE(rules[5].expr.find("label_join((npu_chip_info_health_status >= 0) == bool 1,"),
            std::string::npos);
  EXPECT_TRUE(rules[5].expr.starts_with("min by (host, device)"));
}

TEST(AlertOptionsCheck, DurationsInPrometheusSyntax) {
  EXPECT_EQ(duration_seconds("30s"), 30);
  EXPECT_EQ(duration_seconds("5m"), 300);
  EXPECT_EQ(duration_seconds("1h30m"), 5400);
  EXPECT_EQ(duration_seconds("250ms"), 0.25);
  EXPECT_EQ(duration_seconds("1d"), 86400);
  EXPECT_EQ(duration_seconds("0s"), 0);
  EXPECT_FALSE(duration_seconds("30x"));
  EXPECT_FALSE(duration_seconds(""));
  EXPECT_FALSE(duration_seconds("5m1h"));  // largest unit first
  EXPECT_FALSE(duration_seconds("1.5h"));
}

TEST(AlertOptionsCheck, EveryBadOptionInOneMessage) {
  AlertOptions o;
  o.hbm_ratio = 1.5;
  o.temp_warn = 95;
  o.temp_crit = 90;
  o.bandwidth_min_gbps = 0;
  o.op_jitter = -1;
  o.step_jitter = 0;
  o.restarts_max = -2;
  o.bandwidth_collectives = "allreduse,broadcast";
  o.bandwidth_for = "30x";
  o.restart_window = "0s";
  EXPECT_EQ(test::error_message([&] { validate_alert_options(o); }),
            "--hbm-ratio 1.5: expected a ratio in (0, 1]\n"
            "--temp-warn 95 must be below --temp-crit 90\n"
            "--bandwidth-min-gbps 0: expected a number above 0\n"
            "--op-jitter -1: expected a number above 0\n"
            "--step-jitter 0: expected a number above 0\n"
            "--restarts-max -2: expected 0 or more\n"
            "--bandwidth-collectives: unknown collective 'allreduse' (did you mean "
            "'allreduce'?); expected one of allreduce, allgather, reducescatter, alltoall, "
            "broadcast, reduce, sendrecv\n"
            "--bandwidth-for '30x': expected a Prometheus duration such as 30s, 5m or 1h\n"
            "--restart-window '0s': expected a duration above 0");
  EXPECT_EQ(test::error_message([] { validate_alert_options({}); }), "(no error)");
}

TEST(AlertOptionsCheck, EmptyCollectiveList) {
  AlertOptions o;
  o.bandwidth_collectives = " , ";
  EXPECT_EQ(test::error_message([&] { validate_alert_options(o); }),
            "--bandwidth-collectives ' , ': expected one or more of allreduce, allgather, "
            "reducescatter, alltoall, broadcast, reduce, sendrecv");
}

TEST(AlertTemplates, ExpandLikePrometheus) {
  EXPECT_EQ(expand_template(R"(HBM of {{ $labels.host }} device {{ $labels.device }} is {{ printf "%.2f" $value }} full)",
                            {{"host", "h1"}, {"device", "3"}}, 0.951),
            "HBM of h1 device 3 is 0.95 full");
  EXPECT_EQ(expand_template(R"({{ printf "%.0f" $value }} times)", {}, 4), "4 times");
}

TEST(RuleFile, GroupsAndStableText) {
  const std::string yaml = rules_yaml({});
  EXPECT_TRUE(yaml.find("groups:\n  - name: plumb-normalise\n    rules:\n      - record: "
                        "plumb:device_hbm_used_bytes\n        expr: |-\n") != std::string::npos);
  EXPECT_NE(yaml.find("  - name: plumb-alerts\n    rules:\n      - alert: PlumbHbmHigh\n        "
                      "expr: |-\n          plumb:device_hbm_used_bytes / "
                      "plumb:device_hbm_total_bytes > 0.9\n        for: 5m\n        labels:\n  "
                      "        severity: warning\n"),
            std::string::npos);
  EXPECT_EQ(yaml, rules_yaml({}));
}

TEST(RuleTestFile, FollowsTheThresholds) {
  AlertOptions o;
  o.temp_warn = 80;
  const std::string yaml = rule_tests_yaml(o, "r.yml");
  EXPECT_TRUE(yaml.find("rule_files:\n  - 'r.yml'\nevaluation_interval: 15s\n") != std::string::npos);
  // Exactly at --temp-warn fires, half a degree below is silent.
  EXPECT_NE(yaml.find("npu_chip_info_temperature{id=\"3\",instance=\"hot-npu:9101\"}'\n        "
                      "values: '80x7'"),
            std::string::npos);
  EXPECT_NE(yaml.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"1\",Hostname=\"warm-gpu\"}'\n        values: "
                      "'79.5x7'"),
            std::string::npos);
  EXPECT_NE(yaml.find("summary: 'hot-npu device 3 is at 80.0 °C (hot at 80 °C)'"), std::string::npos);
}

// The generated tests feed dcgm-exporter 4.9 series (new names, `hostname`, the driver label
// DCGM_FI_SYSTEM_DRIVER_VERSION) and expect their values in base units unchanged; and they fix
// the order promtool evaluates the two groups in.
TEST(RuleTestFile, DcgmExporter49InputsAndGroupOrder) {
  const std::string yaml = rule_tests_yaml({}, "r.yml");
  EXPECT_NE(yaml.find("evaluation_interval: 15s\ngroup_eval_order:\n  - plumb-normalise\n"
                      "  - plumb-alerts\ntests:\n"),
            std::string::npos);
  const std::string labels =
      R"({gpu="0",UUID="GPU-0a1b2c3d-0000-4000-8000-000000000000",pci_bus_id="00000000:08:00.0",)"
      R"(device="nvidia0",modelName="NVIDIA H100 80GB HBM3",hostname="dcgm-49",)"
      R"(DCGM_FI_SYSTEM_DRIVER_VERSION="580.95.05"}')";
  EXPECT_NE(yaml.find("- series: 'DCGM_FI_DEV_FB_USED_BYTES" + labels + "\n        values: "
                      "'42949672960x4'"),
            std::string::npos);
  EXPECT_NE(yaml.find("- series: 'DCGM_FI_DEV_GPU_UTIL_RATIO" + labels + "\n        values: '0.73x4'"),
            std::string::npos);
  EXPECT_NE(yaml.find("- labels: 'plumb:device_hbm_used_bytes{host=\"dcgm-49\",device=\"0\"}'\n"
                      "            value: 42949672960\n"),
            std::string::npos);
  EXPECT_NE(yaml.find("- labels: 'plumb:device_hbm_total_bytes{host=\"dcgm-49\",device=\"1\"}'\n"
                      "            value: 85362475008\n"),
            std::string::npos);
  EXPECT_NE(yaml.find("- labels: 'plumb:device_utilization_ratio{host=\"dcgm-49\",device=\"0\"}'\n"
                      "            value: 0.73\n"),
            std::string::npos);
  EXPECT_NE(yaml.find("- labels: 'plumb:device_healthy{host=\"dcgm-49\",device=\"1\"}'\n"
                      "            value: 0\n"),
            std::string::npos);
}

TEST(DashboardCheck, UidAndTitle) {
  DashboardOptions o;
  o.uid = "has space";
  o.title = "";
  o.alerts.hbm_ratio = 0;
  EXPECT_EQ(test::error_message([&] { validate_dashboard_options(o); }),
            "--hbm-ratio 0: expected a ratio in (0, 1]\n"
            "--title '': expected a title\n"
            "--uid 'has space': expected 1 to 40 letters, digits, '-' or '_' (a Grafana "
            "dashboard uid)");
}

const nlohmann::json& panel(const nlohmann::json& d, const std::string& title) {
  for (const nlohmann::json& p : d["panels"]) {
    if (p["title"] == title) return p;
  }
  throw std::runtime_error("no panel " + title);
}

std::vector<std::string> panel_exprs(const nlohmann::json& p) {
  std::vector<std::string> out;
  for (const nlohmann::json& t : p["targets"]) out.push_back(t["expr"].get<std::string>());
  return out;
}

TEST(Dashboard, PanelsOnPlumbSeriesWithTheAlertLines) {
  DashboardOptions o;
  o.alerts.temp_warn = 80;
  const nlohmann::json d = dashboard_json(o);
  EXPECT_EQ(d["schemaVersion"], kGrafanaSchemaVersion);
  EXPECT_EQ(d["uid"], "plumb-cluster");
  EXPECT_EQ(d["templating"]["list"][0]["type"], "datasource");
  EXPECT_EQ(d["templating"]["list"][1]["query"]["query"],
            "label_values(plumb:device_hbm_used_bytes, host)");
  EXPECT_EQ(dashboard_expressions(d).size(), 45u);
  const nlohmann::json& temp = panel(d, "Temperature over devices");
  const nlohmann::json& steps = temp["fieldConfig"]["defaults"]["thresholds"]["steps"];
  EXPECT_EQ(steps[1]["value"], 80);
  EXPECT_EQ(steps[2]["value"], 95);
  const std::string sel = R"(plumb:device_temperature_celsius{host=~"$host",device=~"$device"})";
  EXPECT_EQ(panel_exprs(temp),
            (std::vector<std::string>{"min(" + sel + ")", "quantile(0.01, " + sel + ")",
                                      "quantile(0.5, " + sel + ")", "quantile(0.99, " + sel + ")",
                                      "max(" + sel + ")"}));
  EXPECT_EQ(panel_exprs(panel(d, "Temperature: hottest 5")),
            std::vector<std::string>{"topk(5, " + sel + ")"});
  EXPECT_EQ(panel_exprs(panel(d, "Utilisation: least busy 5"))[0],
            R"(bottomk(5, plumb:device_utilization_ratio{host=~"$host",device=~"$device"}))");
}

// Issue 32: at 10,000 devices no panel draws a line per device or rank: every line panel's
// expression is an aggregation (distribution, top-k, bottom-k, count, sum).
TEST(Dashboard, NoLinePerDeviceAtScale) {
  static const Regex kAggregated("(min|max|sum|count|quantile|topk|bottomk)[ (].*");
  for (const nlohmann::json& p : dashboard_json({})["panels"]) {
    if (p["type"] != "timeseries") continue;
    for (const std::string& e : panel_exprs(p)) {
      EXPECT_TRUE(kAggregated.match(e)) << p["title"] << ": " << e;
    }
  }
}

// The per-host heatmaps: Grafana's heatmap panel over `max by (host)` / `min by (host)`, with
// the cells taken as they are (one row per host), not bucketed again.
TEST(Dashboard, PerHostHeatmaps) {
  const nlohmann::json d = dashboard_json({});
  const nlohmann::json& hot = panel(d, "Temperature per host (hottest device)");
  EXPECT_EQ(hot["type"], "heatmap");
  EXPECT_EQ(hot["options"]["calculate"], false);
  EXPECT_EQ(panel_exprs(hot), std::vector<std::string>{
      R"(max by (host) (plumb:device_temperature_celsius{host=~"$host",device=~"$device"}))"});
  EXPECT_EQ(hot["targets"][0]["legendFormat"], "{{host}}");
  EXPECT_EQ(panel(d, "Utilisation per host (least busy device)")["type"], "heatmap");
}

// The bandwidth panel shows the slow links: each link's best busbw over message sizes, then min
// and low quantiles over links -- not max, which hid them.
TEST(Dashboard, BandwidthBySlowestLinks) {
  DashboardOptions o;
  const nlohmann::json d = dashboard_json(o);
  const nlohmann::json& bw = panel(d, "Collective busbw per layer: slowest links");
  const std::string link =
      "max without (bytes, source) (plumb_comm_busbw_bytes_per_second)";
  EXPECT_EQ(panel_exprs(bw),
            (std::vector<std::string>{"min by (layer, collective) (" + link + ")",
                                      "quantile by (layer, collective) (0.05, " + link + ")",
                                      "quantile by (layer, collective) (0.5, " + link + ")"}));
  EXPECT_EQ(bw["fieldConfig"]["defaults"]["thresholds"]["steps"][1]["value"], 1.25e9);
  EXPECT_EQ(panel_exprs(panel(d, "Slowest 5 links")),
            std::vector<std::string>{"bottomk(5, " + link + ")"});
  for (const std::string& e : dashboard_expressions(d)) {
    EXPECT_EQ(e.find("max by (layer, collective)"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace plumb::exporter
