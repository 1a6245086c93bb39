#include "exporter/rule_tests.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "common/strings.h"
#include "exporter/device_reading.h"
#include "exporter/metrics.h"
#include "exporter/series.h"

namespace plumb::exporter {
namespace {

constexpr double kStep = kTestIntervalSeconds;

// One input series: a selector and its values, given how many samples the test needs.
struct Input {
  std::string series;
  std::function<std::string(int samples)> values;
};

Input constant(std::string series, double v) {
  return {std::move(series), [v](int n) { return fmt::format("{}x{}", promql_number(v), n); }};
}

std::string selector(std::string_view name, const Labels& labels) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels) parts.push_back(fmt::format("{}=\"{}\"", k, v));
  return fmt::format("{}{{{}}}", name, join(parts, ","));
}

std::string yaml_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// An alert that fires: its labels (without alertname and severity) and value.
struct Firing {
  Labels labels;
  double value = 0;
};

struct AlertCase {
  AlertRule rule;
  std::vector<Input> inputs;
  std::vector<Firing> firing;
  std::vector<std::string> silent_hosts;  // devices just on the quiet side of the threshold
  double active_at = 0;      // the latest evaluation at which the alert has become active
  double active_spread = 0;  // how much earlier it may have become active
};

double for_seconds(const AlertRule& r) { return duration_seconds(r.for_duration).value_or(0); }

double next_step(double t) { return std::ceil(t / kStep) * kStep; }

double firing_time(const AlertCase& c) { return next_step(c.active_at + for_seconds(c.rule)) + kStep; }

std::string promql_seconds(double t) { return fmt::format("{}s", promql_number(t)); }

// ---- The YAML of one test group.

std::string inputs_yaml(const AlertCase& c, int samples) {
  std::string out = fmt::format("  - interval: {}\n    input_series:\n", promql_seconds(kStep));
  for (const Input& in : c.inputs) {
    out += fmt::format("      - series: {}\n        values: {}\n", yaml_quoted(in.series),
                       yaml_quoted(in.values(samples)));
  }
  return out;
}

std::string exp_alert_yaml(const AlertRule& rule, const Firing& f) {
  std::string out = fmt::format("          - exp_labels:\n              severity: {}\n", rule.severity);
  for (const auto& [k, v] : f.labels) out += fmt::format("              {}: {}\n", k, yaml_quoted(v));
  out += "            exp_annotations:\n";
  for (const auto& [k, text] : rule.annotations) {
    out += fmt::format("              {}: {}\n", k, yaml_quoted(expand_template(text, f.labels, f.value)));
  }
  return out;
}

std::string alert_tests_yaml(const AlertCase& c) {
  const std::string& name = c.rule.name;
  std::string out = "    alert_rule_test:\n";
  if (for_seconds(c.rule) > c.active_spread) {
    out += fmt::format("      - eval_time: {}\n        alertname: {}\n        exp_alerts: []\n",
                       promql_seconds(c.active_at), name);
  }
  out += fmt::format("      - eval_time: {}\n        alertname: {}\n        exp_alerts:\n",
                     promql_seconds(firing_time(c)), name);
  for (const Firing& f : c.firing) out += exp_alert_yaml(c.rule, f);
  return out;
}

std::string sample_yaml(std::string_view metric, const Labels& labels, double value) {
  return fmt::format("          - labels: {}\n            value: {}\n",
                     yaml_quoted(selector(metric, labels)), promql_number(value));
}

// Pending before `for:` has passed (ALERTS with alertstate="pending"), and nothing at all, pending
// or firing, for the devices on the quiet side.
std::string expr_tests_yaml(const AlertCase& c) {
  std::string out = "    promql_expr_test:\n";
  if (for_seconds(c.rule) > c.active_spread) {
    out += fmt::format(
        "      - expr: {}\n        eval_time: {}\n        exp_samples:\n",
        yaml_quoted(fmt::format(R"(ALERTS{{alertname="{}",alertstate="pending"}})", c.rule.name)),
        promql_seconds(c.active_at));
    for (const Firing& f : c.firing) {
      Labels labels = {{"alertname", c.rule.name}, {"alertstate", "pending"},
                       {"severity", c.rule.severity}};
      labels.insert(labels.end(), f.labels.begin(), f.labels.end());
      out += sample_yaml("ALERTS", labels, 1);
    }
  }
  for (const std::string& host : c.silent_hosts) {
    out += fmt::format(
        "      - expr: {}\n        eval_time: {}\n        exp_samples: []\n",
        yaml_quoted(fmt::format(R"(ALERTS{{alertname="{}",host="{}"}})", c.rule.name, host)),
        promql_seconds(firing_time(c)));
  }
  return out;
}

std::string case_yaml(const AlertCase& c) {
  const int samples = static_cast<int>(firing_time(c) / kStep) + 2;
  return fmt::format("  # {}\n", c.rule.name) + inputs_yaml(c, samples) + alert_tests_yaml(c) +
         expr_tests_yaml(c);
}

// ---- The cases, one per alert, each source's spelling used somewhere.

const AlertRule& rule(const std::vector<AlertRule>& rules, std::string_view name) {
  for (const AlertRule& r : rules) {
    if (r.name == name) return r;
  }
  return rules.front();  // every name asked for is in alert_rules(); unreachable
}

// The labels dcgm-exporter 4.9 puts on a GPU's series: `hostname` (renamed from `Hostname` in
// 4.8.3) and the driver version as DCGM_FI_SYSTEM_DRIVER_VERSION (was DCGM_FI_DRIVER_VERSION).
Labels dcgm49(const char* gpu, const char* hostname) {
  return {{"gpu", gpu}, {"UUID", fmt::format("GPU-0a1b2c3d-0000-4000-8000-00000000000{}", gpu)},
          {"pci_bus_id", fmt::format("00000000:{}8:00.0", gpu)}, {"device", fmt::format("nvidia{}", gpu)},
          {"modelName", "NVIDIA H100 80GB HBM3"}, {"hostname", hostname},
          {"DCGM_FI_SYSTEM_DRIVER_VERSION", "580.95.05"}};
}

AlertCase hbm_case(const AlertOptions& o, const AlertRule& r) {
  // dcgm-exporter (hostname label) above the ratio, npu-exporter (new labels) just below.
  const double total = 81920, reserved = 512, used = (o.hbm_ratio + 0.05) * total;
  const double npu_total = 65536, npu_used = o.hbm_ratio * 0.99 * npu_total;
  const Labels gpu = {{"gpu", "0"}, {"device", "nvidia0"}, {"hostname", "hbm-full"}};
  const Labels npu = {{"id", "1"}, {"vdie_id", "185011D4-21104518-A0C4ED94-14CC040A-56102003"},
                      {"pcie_bus_info", "0000:61:00.0"}, {"instance", "hbm-ok:8082"}};
  const double ratio =
      (used * kBytesPerMiB) / (((used + (total - used - reserved)) + reserved) * kBytesPerMiB);
  // dcgm-exporter 4.9: bytes, the capacity exported as such.
  const double capacity = 85362475008, used_bytes = (o.hbm_ratio + 0.05) * capacity;
  return {r,
          {constant(selector("DCGM_FI_DEV_FB_USED", gpu), used),
           constant(selector("DCGM_FI_DEV_FB_FREE", gpu), total - used - reserved),
           constant(selector("DCGM_FI_DEV_FB_RESERVED", gpu), reserved),
           constant(selector("DCGM_FI_DEV_FB_USED_BYTES", dcgm49("1", "hbm-full-49")), used_bytes),
           constant(selector("DCGM_FI_DEV_FB_CAPACITY_BYTES", dcgm49("1", "hbm-full-49")), capacity),
           constant(selector("npu_chip_info_hbm_used_memory", npu), npu_used),
           constant(selector("npu_chip_info_hbm_total_memory", npu), npu_total)},
          {{{{"host", "hbm-full"}, {"device", "0"}}, ratio},
           {{{"host", "hbm-full-49"}, {"device", "1"}}, used_bytes / capacity}},
          {"hbm-ok"}};
}

AlertCase temperature_case(const AlertOptions& o, const AlertRule& r, bool crit) {
  const double limit = crit ? o.temp_crit : o.temp_warn;
  // Exactly at the limit fires (>=); half a degree below does not.
  if (!crit) {
    return {r,
            {constant(selector("npu_chip_info_temperature", {{"id", "3"}, {"instance", "hot-npu:9101"}}), limit),
             constant(selector("DCGM_FI_DEV_GPU_TEMP", {{"gpu", "1"}, {"Hostname", "warm-gpu"}}), limit - 0.5)},
            {{{{"host", "hot-npu"}, {"device", "3"}}, limit}},
            {"warm-gpu"}};
  }
  return {r,
          {constant(selector("dcgm_gpu_temp", {{"gpu", "2"}, {"instance", "throttling-gpu:9400"}}), limit),
           constant(selector(series::kTemperature, {{"host", "hot-host"}, {"device", "0"}}), limit - 0.5)},
          {{{{"host", "throttling-gpu"}, {"device", "2"}}, limit}},
          {"hot-host"}};
}

AlertCase bandwidth_case(const AlertOptions& o, const AlertRule& r) {
  const double floor = gbps_to_bytes_per_second(o.bandwidth_min_gbps);
  const std::string watched = split_list(o.bandwidth_collectives).front();
  auto labels = [&](const char* collective, const char* node) {
    return Labels{{"layer", "inter-node"}, {"collective", collective}, {"bytes", "1073741824"},
                  {"source", "probe"}, {"instance", fmt::format("{}:9464", node)}};
  };
  AlertCase c{r,
              {constant(selector(series::kBusbw, labels(watched.c_str(), "slow-node")), floor / 2),
               constant(selector(series::kBusbw, labels(watched.c_str(), "fast-node")), floor * 1.01)},
              {},
              {"fast-node"}};
  Labels fired = labels(watched.c_str(), "slow-node");
  fired.emplace_back("host", "slow-node");
  c.firing.push_back({fired, floor / 2});
  // A collective the floor does not watch stays silent however slow it is.
  for (const std::string& name : known_collectives()) {
    if (o.bandwidth_collectives.find(name) != std::string::npos) continue;
    c.inputs.push_back(constant(selector(series::kBusbw, labels(name.c_str(), "other-node")), 1));
    c.silent_hosts.push_back("other-node");
    break;
  }
  return c;
}

AlertCase ratio_case(const AlertRule& r, const char* metric, double jitter, bool op) {
  const double limit = 1 + jitter;
  auto labels = [&](const char* host) {
    Labels l = {{"host", host}, {"rank", "3"}, {"device", "3"}};
    if (op) l.emplace_back("operator", "aten::mm");
    return l;
  };
  return {r,
          {constant(selector(metric, labels("slow-rank")), limit * 1.1),
           constant(selector(metric, labels("steady-rank")), limit * 0.99)},
          {{labels("slow-rank"), limit * 1.1}},
          {"steady-rank"}};
}

AlertCase unhealthy_case(const AlertRule& r) {
  // npu-exporter 0 (unhealthy), 1 (healthy), -1 (the DCMI call failed: no verdict); a GPU with
  // XID 79 (fallen off the bus).
  auto npu = [](const char* id, const char* node) {
    return selector("npu_chip_info_health_status",
                    {{"id", id}, {"model_name", "910A-Ascend-V1"}, {"instance", node}});
  };
  return {r,
          {constant(npu("5", "sick-npu:8082"), 0), constant(npu("6", "well-npu:8082"), 1),
           constant(npu("7", "unknown-npu:8082"), -1),
           constant(selector("DCGM_FI_DEV_XID_ERRORS", {{"gpu", "4"}, {"hostname", "sick-gpu"}}), 79),
           // dcgm-exporter 4.9: no XID, but no spare rows left.
           constant(selector("DCGM_FI_DEV_XID_ERROR", dcgm49("2", "remap-failed-gpu")), 0),
           constant(selector("DCGM_FI_DEV_ROW_REMAP_FAILED", dcgm49("2", "remap-failed-gpu")), 1),
           // dcgm-exporter 4.9: XID 48 (double-bit ECC error), rows still remappable.
           constant(selector("DCGM_FI_DEV_XID_ERROR", dcgm49("1", "xid-gpu")), 48),
           constant(selector("DCGM_FI_DEV_ROW_REMAP_FAILED", dcgm49("1", "xid-gpu")), 0),
           constant(selector("DCGM_FI_DEV_XID_ERROR", dcgm49("3", "well-gpu")), 0),
           constant(selector("DCGM_FI_DEV_ROW_REMAP_FAILED", dcgm49("3", "well-gpu")), 0)},
          {{{{"host", "sick-npu"}, {"device", "5"}}, 0}, {{{"host", "sick-gpu"}, {"device", "4"}}, 0},
           {{{"host", "remap-failed-gpu"}, {"device", "2"}}, 0}, {{{"host", "xid-gpu"}, {"device", "1"}}, 0}},
          {"well-npu", "unknown-npu", "well-gpu"}};
}

// The counter climbs steadily, so that once a whole window lies behind it increase() over the
// window is (max + 1) restarts (fires) or max (silent). round(increase()) passes max once half a
// restart more than max has happened, at window x (max + 0.5) / (max + 1), and reads max + 1 from
// then on.
AlertCase restart_case(const AlertOptions& o, const AlertRule& r) {
  const double window = duration_seconds(o.restart_window).value_or(3600);
  const double n = o.restarts_max;
  auto ramp = [&](double restarts) {
    const double step = restarts * kStep / window;
    return [step](int samples) { return fmt::format("0+{}x{}", promql_number(step), samples); };
  };
  const Labels loop = {{"job_name", "train.sh"}, {"instance", "loop-node:9100"}};
  const Labels calm = {{"job_name", "train.sh"}, {"instance", "calm-node:9100"}};
  AlertCase c{r,
              {{selector(series::kRunRestarts, loop), ramp(n + 1)},
               {selector(series::kRunRestarts, calm), ramp(n)}},
              {{{{"job_name", "train.sh"}, {"instance", "loop-node:9100"}, {"host", "loop-node"}},
                n + 1}},
              {"calm-node"}};
  c.active_at = next_step(window * (n + 0.5) / (n + 1)) + kStep;
  c.active_spread = kStep;
  return c;
}

// ---- Faults: Xid, ECC, row remapping (gauges, no `for:` by default) and link counters.

AlertCase xid_case(const AlertOptions& o, const AlertRule& r) {
  // The first, middle and last code of --xid-codes fire, each in one dcgm-exporter spelling;
  // no Xid (0) and the smallest code not on the list stay silent.
  const std::vector<int> codes = xid_code_list(o.xid_codes).value_or(std::vector<int>{79});
  int unlisted = 1;
  while (std::find(codes.begin(), codes.end(), unlisted) != codes.end()) ++unlisted;
  const double first = codes.front(), middle = codes[codes.size() / 2], last = codes.back();
  return {r,
          {constant(selector("DCGM_FI_DEV_XID_ERROR", dcgm49("0", "xid-new")), first),
           constant(selector("DCGM_FI_DEV_XID_ERRORS", {{"gpu", "1"}, {"Hostname", "xid-old"}}), last),
           constant(selector("dcgm_xid_errors", {{"gpu", "0"}, {"instance", "xid-compat:9400"}}), middle),
           constant(selector("DCGM_FI_DEV_XID_ERROR", dcgm49("2", "xid-none")), 0),
           constant(selector("DCGM_FI_DEV_XID_ERRORS", {{"gpu", "3"}, {"hostname", "xid-unlisted"}}), unlisted)},
          {{{{"host", "xid-new"}, {"device", "0"}}, first},
           {{{"host", "xid-old"}, {"device", "1"}}, last},
           {{{"host", "xid-compat"}, {"device", "0"}}, middle}},
          {"xid-none", "xid-unlisted"}};
}

AlertCase ecc_case(const AlertRule& r) {
  return {r,
          {constant(selector("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", dcgm49("2", "dbe-gpu")), 2),
           constant(selector("dcgm_ecc_dbe_volatile_total", {{"gpu", "0"}, {"instance", "dbe-compat:9400"}}), 1),
           constant(selector("npu_chip_info_hbm_ecc_double_bit_error_cnt", {{"id", "4"}, {"instance", "dbe-npu:8082"}}), 3),
           constant(selector("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", {{"gpu", "0"}, {"hostname", "ecc-clean"}}), 0),
           constant(selector("npu_chip_info_hbm_ecc_double_bit_error_cnt", {{"id", "0"}, {"instance", "npu-clean:8082"}}), 0)},
          {{{{"host", "dbe-gpu"}, {"device", "2"}}, 2},
           {{{"host", "dbe-compat"}, {"device", "0"}}, 1},
           {{{"host", "dbe-npu"}, {"device", "4"}}, 3}},
          {"ecc-clean", "npu-clean"}};
}

AlertCase row_remap_case(const AlertRule& r) {
  return {r,
          {constant(selector("DCGM_FI_DEV_ROW_REMAP_FAILED", dcgm49("3", "remap-new")), 1),
           constant(selector("DCGM_FI_DEV_ROW_REMAP_FAILURE", {{"gpu", "5"}, {"Hostname", "remap-old"}}), 1),
           constant(selector("DCGM_FI_DEV_ROW_REMAP_FAILED", dcgm49("0", "remap-ok")), 0)},
          {{{{"host", "remap-new"}, {"device", "3"}}, 1}, {{{"host", "remap-old"}, {"device", "5"}}, 1}},
          {"remap-ok"}};
}

// A counter that holds `before` for a whole --link-window and then steps to `after` at sample
// `jump`; the alert is checked one sample later, when the window [t - window, t] starts on a
// sample (Prometheus 2's closed range: increase() is exactly after - before).
struct Step {
  std::string series;
  double before, after;
};

AlertCase counter_case(const AlertOptions& o, const AlertRule& r, const std::vector<Step>& steps,
                       std::vector<Firing> firing, std::vector<std::string> silent) {
  const double window = duration_seconds(o.link_window).value_or(600);
  const int jump = static_cast<int>(std::ceil(window / kStep)) + 1;
  AlertCase c{r, {}, std::move(firing), std::move(silent)};
  for (const Step& s : steps) {
    c.inputs.push_back({s.series, [s, jump](int n) {
                          return fmt::format("{}x{} {}x{}", promql_number(s.before), jump - 1,
                                             promql_number(s.after), n - jump);
                        }});
  }
  c.active_at = jump * kStep;
  return c;
}

AlertCase nvlink_case(const AlertOptions& o, const AlertRule& r) {
  const double over = o.link_errors_max + 1;
  return counter_case(
      o, r,
      {// Two counters of one GPU add up; a dcgm-exporter 1.x GPU; a GPU whose errors are old;
       // a GPU whose driver reloaded (the counter back to 0 is no error).
       {selector("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", dcgm49("0", "nvlink-bad")), 10, 10 + over},
       {selector("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", dcgm49("0", "nvlink-bad")), 3, 5},
       {selector("dcgm_nvlink_recovery_error_count_total", {{"gpu", "1"}, {"instance", "nvlink-compat:9400"}}), 0, over},
       {selector("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", dcgm49("1", "nvlink-old-errors")), 50, 50},
       {selector("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", dcgm49("2", "nvlink-reloaded")), 7, 0}},
      {{{{"host", "nvlink-bad"}, {"device", "0"}}, over + 2},
       {{{"host", "nvlink-compat"}, {"device", "1"}}, over}},
      {"nvlink-old-errors", "nvlink-reloaded"});
}

Labels ib_port(const char* hca, const char* node) {
  return {{"device", hca}, {"port", "1"}, {"instance", fmt::format("{}:9100", node)}};
}

AlertCase nic_case(const AlertOptions& o, const AlertRule& r) {
  const double over = o.link_errors_max + 1;
  auto netdev = [](const char* dev, const char* node) {
    return Labels{{"device", dev}, {"instance", fmt::format("{}:9100", node)}};
  };
  return counter_case(
      o, r,
      {{selector("node_infiniband_symbol_error_total", ib_port("mlx5_0", "ib-bad")), 100, 100 + over},
       {selector("node_infiniband_port_errors_received_total", ib_port("mlx5_0", "ib-bad")), 0, 2},
       {selector("node_network_receive_errs_total", netdev("eth1", "eth-bad")), 4, 4 + over},
       {selector("npu_chip_roce_rx_err_pkt_num", {{"id", "2"}, {"instance", "npu-bad:8082"}}), 0, over},
       {selector("node_infiniband_symbol_error_total", ib_port("mlx5_1", "ib-ok")), 12, 12},
       {selector("node_network_transmit_errs_total", netdev("eth0", "eth-ok")), 9, 9}},
      {{{{"host", "ib-bad"}, {"device", "mlx5_0/1"}}, over + 2},
       {{{"host", "eth-bad"}, {"device", "eth1"}}, over},
       {{{"host", "npu-bad"}, {"device", "2"}}, over}},
      {"ib-ok", "eth-ok"});
}

AlertCase flap_case(const AlertOptions& o, const AlertRule& r) {
  const double over = o.link_flaps_max + 1;
  auto netdev = [](const char* dev, const char* node) {
    return Labels{{"device", dev}, {"instance", fmt::format("{}:9100", node)}};
  };
  return counter_case(
      o, r,
      {{selector("node_infiniband_link_downed_total", ib_port("mlx5_2", "ib-flap")), 1, 1 + over},
       // node_exporter 1.x: carrier_down_changes counted once, not again through carrier_changes.
       {selector("node_network_carrier_down_changes_total", netdev("eth2", "eth-flap")), 3, 3 + over},
       {selector("node_network_carrier_changes_total", netdev("eth2", "eth-flap")), 6, 6 + 2 * over},
       // An older node_exporter: carrier_changes only, both edges of each flap.
       {selector("node_network_carrier_changes_total", netdev("eth0", "old-flap")), 4, 4 + 2 * over},
       {selector("npu_chip_link_up_num", {{"id", "5"}, {"instance", "npu-flap:8082"}}), 2, 2 + over},
       {selector("node_infiniband_link_downed_total", ib_port("mlx5_3", "link-steady")), 3, 3},
       {selector("node_network_carrier_changes_total", netdev("eth3", "eth-steady")), 2, 2}},
      {{{{"host", "ib-flap"}, {"device", "mlx5_2/1"}}, over},
       {{{"host", "eth-flap"}, {"device", "eth2"}}, over},
       {{{"host", "old-flap"}, {"device", "eth0"}}, over},
       {{{"host", "npu-flap"}, {"device", "5"}}, over}},
      {"link-steady", "eth-steady"});
}

// ---- The recording rules: every spelling into plumb: series with exact values.

struct Device {
  const char* host;
  const char* device;
};

struct Record {
  const char* name;
  std::vector<std::pair<Device, double>> samples;
};

std::string recording_case() {
  std::vector<std::pair<std::string, double>> in;
  auto add = [&](const char* metric, const Labels& l, double v) { in.emplace_back(selector(metric, l), v); };
  const Labels dcgm_new = {{"gpu", "0"}, {"UUID", "GPU-fc60126e-514d-3522-2828-c5daa8e99d85"},
                           {"device", "nvidia0"}, {"modelName", "NVIDIA H100 80GB HBM3"},
                           {"hostname", "dcgm-new"}, {"instance", "10.0.0.1:9400"}};
  add("DCGM_FI_DEV_FB_USED", dcgm_new, 40960);
  add("DCGM_FI_DEV_FB_FREE", dcgm_new, 40448);
  add("DCGM_FI_DEV_FB_RESERVED", dcgm_new, 512);
  add("DCGM_FI_DEV_GPU_TEMP", dcgm_new, 61);
  add("DCGM_FI_DEV_POWER_USAGE", dcgm_new, 512.5);
  add("DCGM_FI_DEV_GPU_UTIL", dcgm_new, 87);
  add("DCGM_FI_DEV_XID_ERRORS", dcgm_new, 0);
  add("DCGM_FI_DEV_ROW_REMAP_FAILURE", dcgm_new, 0);
  // dcgm-exporter 4.9: bytes and a 0-1 ratio, as exported. GPU 0 exports its capacity, GPU 1
  // only used, free and reserved (a collector file without FB_CAPACITY_BYTES).
  const Labels dcgm49_a = dcgm49("0", "dcgm-49"), dcgm49_b = dcgm49("1", "dcgm-49");
  add("DCGM_FI_DEV_FB_USED_BYTES", dcgm49_a, 42949672960);
  add("DCGM_FI_DEV_FB_FREE_BYTES", dcgm49_a, 41875931136);
  add("DCGM_FI_DEV_FB_RESERVED_BYTES", dcgm49_a, 536870912);
  add("DCGM_FI_DEV_FB_CAPACITY_BYTES", dcgm49_a, 85362475008);
  add("DCGM_FI_DEV_GPU_TEMP_CELSIUS", dcgm49_a, 62);
  add("DCGM_FI_DEV_BOARD_POWER_WATTS", dcgm49_a, 455.25);
  add("DCGM_FI_DEV_GPU_UTIL_RATIO", dcgm49_a, 0.73);
  add("DCGM_FI_DEV_XID_ERROR", dcgm49_a, 0);
  add("DCGM_FI_DEV_ROW_REMAP_FAILED", dcgm49_a, 0);
  add("DCGM_FI_DEV_FB_USED_BYTES", dcgm49_b, 1073741824);
  add("DCGM_FI_DEV_FB_FREE_BYTES", dcgm49_b, 83751862272);
  add("DCGM_FI_DEV_FB_RESERVED_BYTES", dcgm49_b, 536870912);
  add("DCGM_FI_DEV_GPU_TEMP_CELSIUS", dcgm49_b, 38);
  add("DCGM_FI_DEV_BOARD_POWER_WATTS", dcgm49_b, 71.5);
  add("DCGM_FI_DEV_GPU_UTIL_RATIO", dcgm49_b, 0);
  add("DCGM_FI_DEV_XID_ERROR", dcgm49_b, 0);
  add("DCGM_FI_DEV_ROW_REMAP_FAILED", dcgm49_b, 1);
  const Labels dcgm_old = {{"gpu", "1"}, {"device", "nvidia1"}, {"Hostname", "dcgm-old"},
                           {"instance", "10.0.0.2:9400"}};
  add("DCGM_FI_DEV_FB_USED", dcgm_old, 1024);
  add("DCGM_FI_DEV_FB_FREE", dcgm_old, 79872);
  add("DCGM_FI_DEV_FB_TOTAL", dcgm_old, 81920);
  add("DCGM_FI_DEV_GPU_TEMP", dcgm_old, 40);
  add("DCGM_FI_DEV_POWER_USAGE", dcgm_old, 70);
  add("DCGM_FI_DEV_GPU_UTIL", dcgm_old, 0);
  add("DCGM_FI_DEV_XID_ERRORS", dcgm_old, 0);
  const Labels compat = {{"gpu", "0"}, {"uuid", "GPU-63bc0b91"}, {"instance", "dcgm-compat:9400"}};
  add("dcgm_fb_used", compat, 2048);
  add("dcgm_fb_free", compat, 14336);
  add("dcgm_gpu_temp", compat, 35);
  add("dcgm_power_usage", compat, 25.5);
  add("dcgm_gpu_utilization", compat, 50);
  add("dcgm_xid_errors", compat, 43);
  const Labels npu_old = {{"id", "0"}, {"instance", "npu-old:9101"}};
  add("npu_chip_info_hbm_used_memory", npu_old, 3133);
  add("npu_chip_info_hbm_total_memory", npu_old, 65536);
  add("npu_chip_info_temperature", npu_old, 45);
  add("npu_chip_info_power", npu_old, 93.5);
  add("npu_chip_info_utilization", npu_old, 25);
  add("npu_chip_info_health_status", npu_old, 1);
  const Labels npu_new = {{"container_name", ""}, {"id", "1"}, {"model_name", "910A-Ascend-V1"},
                          {"namespace", ""}, {"pcie_bus_info", "0000:61:00.0"}, {"pod_name", ""},
                          {"vdie_id", "185011D4-21104518-A0C4ED94-14CC040A-56102003"},
                          {"instance", "npu-new:8082"}};
  add("npu_chip_info_hbm_used_memory", npu_new, 29954);
  add("npu_chip_info_hbm_total_memory", npu_new, 65536);
  add("npu_chip_info_temperature", npu_new, 50);
  add("npu_chip_info_power", npu_new, 180);
  add("npu_chip_info_utilization", npu_new, 75);
  add("npu_chip_info_health_status", npu_new, 0);
  add("npu_chip_info_health_status", {{"id", "2"}, {"instance", "npu-new:8082"}}, -1);
  const Labels plumb = {{"host", "plumb-host"}, {"device", "0"}, {"vendor", "nvidia"},
                        {"model", "NVIDIA A100-SXM4-80GB"}};
  add(series::kHbmUsed, plumb, 1e9);
  add(series::kHbmTotal, plumb, 85899345920);
  add(series::kTemperature, plumb, 55);
  add(series::kPower, plumb, 300);
  add(series::kUtilization, plumb, 0.5);
  add(series::kHealthy, plumb, 1);
  // The same device from plumb exporter and dcgm-exporter: one series, dcgm-exporter's value.
  add(series::kTemperature, {{"host", "dcgm-new"}, {"device", "0"}}, 99);

  const Device a{"dcgm-new", "0"}, b{"dcgm-old", "1"}, c{"dcgm-compat", "0"}, d{"npu-old", "0"},
      e{"npu-new", "1"}, p{"plumb-host", "0"}, f{"dcgm-49", "0"}, g{"dcgm-49", "1"};
  const std::vector<Record> records = {
      {series::kRecHbmUsed,
       {{a, 40960 * kBytesPerMiB},
        {b, 1024 * kBytesPerMiB},
        {c, 2048 * kBytesPerMiB},
        {d, 3133 * kBytesPerMiB},
        {e, 29954 * kBytesPerMiB},
        {p, 1e9},
        {f, 42949672960},
        {g, 1073741824}}},
      {series::kRecHbmTotal,
       {{a, 81920 * kBytesPerMiB},
        {b, 81920 * kBytesPerMiB},
        {c, 16384 * kBytesPerMiB},
        {d, 65536 * kBytesPerMiB},
        {e, 65536 * kBytesPerMiB},
        {p, 85899345920},
        {f, 85362475008},
        {g, 85362475008}}},
      {series::kRecTemperature,
       {{a, 61}, {b, 40}, {c, 35}, {d, 45}, {e, 50}, {p, 55}, {f, 62}, {g, 38}}},
      {series::kRecPower,
       {{a, 512.5}, {b, 70}, {c, 25.5}, {d, 93.5}, {e, 180}, {p, 300}, {f, 455.25}, {g, 71.5}}},
      {series::kRecUtilization,
       {{a, 87.0 / 100}, {b, 0}, {c, 0.5}, {d, 0.25}, {e, 0.75}, {p, 0.5}, {f, 0.73}, {g, 0}}},
      {series::kRecHealthy, {{a, 1}, {b, 1}, {c, 0}, {d, 1}, {e, 0}, {p, 1}, {f, 1}, {g, 0}}},
      {kRecXidCode, {{a, 0}, {b, 0}, {c, 43}, {f, 0}, {g, 0}}},
      {kRecRowRemapFailed, {{a, 0}, {f, 0}, {g, 1}}},
  };
  std::string out = fmt::format("  # the recording rules\n  - interval: {}\n    input_series:\n",
                                promql_seconds(kStep));
  for (const auto& [s, v] : in) {
    out += fmt::format("      - series: {}\n        values: {}\n", yaml_quoted(s),
                       yaml_quoted(fmt::format("{}x4", promql_number(v))));
  }
  out += "    promql_expr_test:\n";
  for (const Record& r : records) {
    out += fmt::format("      - expr: {}\n        eval_time: {}\n        exp_samples:\n", r.name,
                       promql_seconds(2 * kStep));
    for (const auto& [dev, v] : r.samples) {
      out += sample_yaml(r.name, {{"host", dev.host}, {"device", dev.device}}, v);
    }
  }
  return out;
}

}  // namespace

std::string rule_tests_yaml(const AlertOptions& o, const std::string& rules_file) {
  const std::vector<AlertRule> rules = alert_rules(o);
  const std::vector<AlertCase> cases = {
      hbm_case(o, rule(rules, "PlumbHbmHigh")),
      temperature_case(o, rule(rules, "PlumbDeviceHot"), false),
      temperature_case(o, rule(rules, "PlumbDeviceThrottling"), true),
      bandwidth_case(o, rule(rules, "PlumbCollectiveBandwidthLow")),
      ratio_case(rule(rules, "PlumbOperatorSlow"), series::kOpRatio, o.op_jitter, true),
      ratio_case(rule(rules, "PlumbStepSlow"), series::kStepRatio, o.step_jitter, false),
      unhealthy_case(rule(rules, "PlumbDeviceUnhealthy")),
      restart_case(o, rule(rules, "PlumbRestartLoop")),
      xid_case(o, rule(rules, "PlumbXidError")),
      ecc_case(rule(rules, "PlumbEccUncorrectable")),
      row_remap_case(rule(rules, "PlumbRowRemapFailed")),
      nvlink_case(o, rule(rules, "PlumbNvlinkErrors")),
      nic_case(o, rule(rules, "PlumbNicErrors")),
      flap_case(o, rule(rules, "PlumbLinkFlapping")),
  };
  // group_eval_order: without it promtool evaluates the two groups in map order, at random, and
  // an alert evaluated before the recording rule it reads is pending one step late (the tests
  // failed about one run in two).
  std::string out = fmt::format(
      "# Written by plumb alerts test. Run: promtool test rules FILE\n"
      "rule_files:\n  - {}\nevaluation_interval: {}\n"
      "group_eval_order:\n  - plumb-normalise\n  - plumb-alerts\ntests:\n",
      yaml_quoted(rules_file), promql_seconds(kStep));
  out += recording_case();
  for (const AlertCase& c : cases) out += case_yaml(c);
  return out;
}

}  // namespace plumb::exporter
