#include "exporter/rules.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string_view>

#include "common/error.h"
#include "common/regex.h"
#include "common/strings.h"
#include "exporter/series.h"

namespace plumb::exporter {
namespace {

// The largest Xid code --xid-codes takes (NVIDIA's catalog numbers them below 200 today).
constexpr int kMaxXid = 999;

// The shortest --link-window: four scrapes at the usual 15 s interval, Prometheus' advice for the
// range of rate() and increase().
constexpr double kMinLinkWindow = 60;

// ---- Recording rules: one table entry per spelling of a device metric.

// How one source spells one metric: the PromQL that reads it (already in base units) and the
// label that holds the device id there.
struct Spelling {
  std::string expr;
  const char* device_label;
};

struct Normalised {
  const char* record;
  const char* aggregate;  // over series of one device: MIG instances (max), health checks (min)
  std::vector<Spelling> spellings;  // in order of preference: the first source that has a device
};

// MiB to bytes: dcgm-exporter's framebuffer fields and npu-exporter's HBM fields (the npu-smi
// "MB" column is MiB: 65536 MB on a 64 GiB part).
constexpr const char* kTimesMiB = " * 1048576";

// `host` from, in order, a `host` label (plumb exporter, or set by relabelling), dcgm-exporter's
// `hostname` (newer) or `Hostname` (older), else `instance` without its port. label_join puts
// them in one helper label; the regex takes its first non-empty part.
std::string with_host(const std::string& expr) {
  return fmt::format(
      R"(label_replace(label_replace(label_join({}, "plumb_host_src", "|", "host", "hostname", )"
      R"("Hostname", "instance"), "host", "$1", "plumb_host_src", )"
      R"("[|]*([^|]+?)(?::[0-9]+)?(?:[|].*)?"), "plumb_host_src", "", "", ""))",
      expr);
}

// One spelling as host, device and the value, every other label dropped by the aggregation.
std::string normalised(const Normalised& n, const Spelling& s) {
  return fmt::format(R"~({} by (host, device) (label_replace({}, "device", "$1", "{}", "(.+)")))~",
                     n.aggregate, with_host(s.expr), s.device_label);
}

// dcgm-exporter has no health field in its default counters: a device is unhealthy when it
// reports an XID error or a failed row remapping (docs/alerts.md). Each check keeps its own
// label so that `or` keeps both and min() joins them.
std::string dcgm_health(const char* xid, const char* row_remap) {
  return fmt::format(R"(label_replace({} == bool 0, "plumb_check", "xid", "", "") or )"
                     R"(label_replace({} == bool 0, "plumb_check", "row_remap", "", ""))",
                     xid, row_remap);
}

// dcgm-exporter 4.9.0 (DCGM 4.7) renamed its default fields to DCGM 4.7's names and moved GPU
// memory from MiB to bytes and utilisation from % to a 0-1 ratio, so these need no conversion.
// Sources (docs/alerts.md, "Where the names and units come from"): the 4.9.0 release notes
// (newreleases.io/project/github/NVIDIA/dcgm-exporter/release/4.9.0: the renames, the units,
// DCGM_FI_DEV_FB_CAPACITY_BYTES collected by default); NVIDIA/go-dcgm
// pkg/dcgm/alias_resolution_test.go (GPU_TEMP -> GPU_TEMP_CELSIUS, POWER_USAGE ->
// BOARD_POWER_WATTS, XID_ERRORS -> XID_ERROR); DCGM's python bindings dcgm_fields.py
// (ROW_REMAP_FAILURE -> ROW_REMAP_FAILED); a public survey of DCGM 4.7's field identifiers, a
// secondary source only (FB_FREE/USED/RESERVED_BYTES 1626-1628, GPU_UTIL_RATIO 1613, 0-1).
std::string dcgm49_fb_total() {
  return "(DCGM_FI_DEV_FB_CAPACITY_BYTES or DCGM_FI_DEV_FB_USED_BYTES + "
         "DCGM_FI_DEV_FB_FREE_BYTES + (DCGM_FI_DEV_FB_RESERVED_BYTES or "
         "DCGM_FI_DEV_FB_USED_BYTES * 0))";
}

std::vector<Normalised> normalised_table() {
  namespace s = series;
  const std::string fb_total =
      std::string("(DCGM_FI_DEV_FB_TOTAL or DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE + ") +
      "(DCGM_FI_DEV_FB_RESERVED or DCGM_FI_DEV_FB_USED * 0))" + kTimesMiB;
  return {
      {s::kRecHbmUsed,
       "max",
       {{"DCGM_FI_DEV_FB_USED_BYTES", "gpu"},
        {std::string("DCGM_FI_DEV_FB_USED") + kTimesMiB, "gpu"},
        {std::string("dcgm_fb_used") + kTimesMiB, "gpu"},
        {std::string("npu_chip_info_hbm_used_memory") + kTimesMiB, "id"},
        {s::kHbmUsed, "device"}}},
      {s::kRecHbmTotal,
       "max",
       {{dcgm49_fb_total(), "gpu"},
        {fb_total, "gpu"},
        {std::string("(dcgm_fb_used + dcgm_fb_free)") + kTimesMiB, "gpu"},
        {std::string("npu_chip_info_hbm_total_memory") + kTimesMiB, "id"},
        {s::kHbmTotal, "device"}}},
      {s::kRecTemperature,
       "max",
       {{"DCGM_FI_DEV_GPU_TEMP_CELSIUS", "gpu"},
        {"DCGM_FI_DEV_GPU_TEMP", "gpu"},
        {"dcgm_gpu_temp", "gpu"},
        {"npu_chip_info_temperature", "id"},
        {s::kTemperature, "device"}}},
      {s::kRecPower,
       "max",
       {{"DCGM_FI_DEV_BOARD_POWER_WATTS", "gpu"},
        {"DCGM_FI_DEV_POWER_USAGE", "gpu"},
        {"dcgm_power_usage", "gpu"},
        {"npu_chip_info_power", "id"},
        {s::kPower, "device"}}},
      {s::kRecUtilization,
       "max",
       {{"DCGM_FI_DEV_GPU_UTIL_RATIO", "gpu"},
        {"DCGM_FI_DEV_GPU_UTIL / 100", "gpu"},
        {"dcgm_gpu_utilization / 100", "gpu"},
        {"npu_chip_info_utilization / 100", "id"},
        {s::kUtilization, "device"}}},
      // npu-exporter: 1 healthy, 0 unhealthy, -1 (26.1.0 and later) the DCMI call failed, which
      // says nothing about the device: such a device has no plumb:device_healthy.
      {s::kRecHealthy,
       "min",
       {{dcgm_health("DCGM_FI_DEV_XID_ERROR", "DCGM_FI_DEV_ROW_REMAP_FAILED"), "gpu"},
        {dcgm_health("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ROW_REMAP_FAILURE"), "gpu"},
        {"dcgm_xid_errors == bool 0", "gpu"},
        {"(npu_chip_info_health_status >= 0) == bool 1", "id"},
        {s::kHealthy, "device"}}},
      // The fault series (docs/alerts.md, "Faults"). dcgm-exporter's XID field is a gauge holding
      // the last Xid the GPU reported; npu-exporter has no Xid (its error codes are Ascend's
      // own, read by PlumbDeviceUnhealthy through the health status), plumb exporter neither.
      {kRecXidCode,
       "max",
       {{"DCGM_FI_DEV_XID_ERROR", "gpu"},
        {"DCGM_FI_DEV_XID_ERRORS", "gpu"},
        {"dcgm_xid_errors", "gpu"}}},
      // Volatile double-bit errors: counted since the driver loaded (a GPU reset clears them);
      // npu-exporter's HBM double-bit error count.
      {kRecEccUncorrectable,
       "max",
       {{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "gpu"},
        {"dcgm_ecc_dbe_volatile_total", "gpu"},
        {"npu_chip_info_hbm_ecc_double_bit_error_cnt", "id"}}},
      {kRecRowRemapFailed,
       "max",
       {{"DCGM_FI_DEV_ROW_REMAP_FAILED", "gpu"}, {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gpu"}}},
  };
}

// ---- Counters of links (NVLink, NIC ports): their increase over a window, summed per device.

// One counter as a spelling: the PromQL that reads its increase ({w} is the window), the label
// that names the device, and a tag that keeps the counters apart until they are summed.
struct Counter {
  std::string expr;
  const char* device_label;
  const char* tag;
};

// NVLink errors per GPU (the *_TOTAL fields sum every link of the GPU). DCGM field ids 409
// (CRC flit), 419 (CRC data), 429 (replay), 439 (recovery); dcgm-exporter 1.x's names below.
const std::vector<Counter>& nvlink_error_counters() {
  static const std::vector<Counter> kCounters = {
      {"increase(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL[{w}])", "gpu", "crc_flit"},
      {"increase(DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL[{w}])", "gpu", "crc_data"},
      {"increase(DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL[{w}])", "gpu", "replay"},
      {"increase(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL[{w}])", "gpu", "recovery"},
      {"increase(dcgm_nvlink_flit_crc_error_count_total[{w}])", "gpu", "crc_flit_1x"},
      {"increase(dcgm_nvlink_data_crc_error_count_total[{w}])", "gpu", "crc_data_1x"},
      {"increase(dcgm_nvlink_replay_error_count_total[{w}])", "gpu", "replay_1x"},
      {"increase(dcgm_nvlink_recovery_error_count_total[{w}])", "gpu", "recovery_1x"},
  };
  return kCounters;
}

// An InfiniBand counter of node_exporter, its device named "<HCA>/<port>" (mlx5_0/1).
std::string ib(const char* name) {
  return fmt::format(
      R"(label_join(increase(node_infiniband_{}[{{w}}]), "device", "/", "device", "port"))", name);
}

// Errors of NIC ports: node_exporter's InfiniBand (a RoCE HCA too) and netdev counters, and
// npu-exporter's RoCE and MAC counters of the NPU's own port.
const std::vector<Counter>& nic_error_counters() {
  static const std::vector<Counter> kCounters = {
      {ib("port_errors_received_total"), "device", "ib_rcv_errors"},
      {ib("symbol_error_total"), "device", "ib_symbol"},
      {ib("link_error_recovery_total"), "device", "ib_link_recovery"},
      {ib("local_link_integrity_errors_total"), "device", "ib_link_integrity"},
      {ib("excessive_buffer_overrun_errors_total"), "device", "ib_buffer_overrun"},
      {ib("port_receive_remote_physical_errors_total"), "device", "ib_remote_physical"},
      {"increase(node_network_receive_errs_total[{w}])", "device", "net_rx_errs"},
      {"increase(node_network_transmit_errs_total[{w}])", "device", "net_tx_errs"},
      {"increase(npu_chip_roce_rx_err_pkt_num[{w}])", "id", "npu_roce_rx"},
      {"increase(npu_chip_roce_tx_err_pkt_num[{w}])", "id", "npu_roce_tx"},
      {"increase(npu_chip_mac_rx_bad_pkt_num[{w}])", "id", "npu_mac_rx_bad"},
  };
  return kCounters;
}

// Link-down events: IB's LinkDownedCounter; a netdev's carrier going down (node_exporter 1.x's
// carrier_down_changes, else half of carrier_changes, which counts both edges); an NPU port's
// link-up count (each flap ends with one).
const std::vector<Counter>& link_flap_counters() {
  static const std::vector<Counter> kCounters = {
      {ib("link_downed_total"), "device", "ib_link_downed"},
      {"(increase(node_network_carrier_down_changes_total[{w}]) or "
       "increase(node_network_carrier_changes_total[{w}]) / 2)",
       "device", "net_carrier_down"},
      {"increase(npu_chip_link_up_num[{w}])", "id", "npu_link_up"},
  };
  return kCounters;
}

// The counters' increase over `window`, summed per host and device.
std::string counters_sum(const std::vector<Counter>& counters, const std::string& window) {
  std::vector<std::string> parts;
  for (const Counter& c : counters) {
    const std::string expr = fmt::format(fmt::runtime(c.expr), fmt::arg("w", window));
    parts.push_back(fmt::format(
        R"~(label_replace(label_replace({}, "device", "$1", "{}", "(.+)"), "plumb_counter", "{}", "", ""))~",
        with_host(expr), c.device_label, c.tag));
  }
  return "sum by (host, device) (\n" + join(parts, "\nor\n") + "\n)";
}

// ---- Alerting rules.

std::string collectives_regex(const AlertOptions& o) {
  return join(split_list(o.bandwidth_collectives), "|");
}

// What to check first, per alert: the annotation an operator reads at 3 a.m.
AlertRule hbm_high(const AlertOptions& o) {
  namespace s = series;
  return {"PlumbHbmHigh",
          fmt::format("{} / {} > {}", s::kRecHbmUsed, s::kRecHbmTotal, promql_number(o.hbm_ratio)),
          o.hbm_for, "warning",
          {{"summary", fmt::format("HBM of {{{{ $labels.host }}}} device {{{{ $labels.device }}}} "
                                   "is {{{{ printf \"%.2f\" $value }}}} full (above {})",
                                   promql_number(o.hbm_ratio))},
           {"description",
            "Check first: memory that grows step after step (plumb mem on an allocator snapshot), "
            "a larger batch or sequence than planned (plumb plan), another process on the device "
            "(nvidia-smi / npu-smi info)."}}};
}

AlertRule temperature(const AlertOptions& o, bool crit) {
  const double limit = crit ? o.temp_crit : o.temp_warn;
  return {crit ? "PlumbDeviceThrottling" : "PlumbDeviceHot",
          fmt::format("{} >= {}", series::kRecTemperature, promql_number(limit)), o.temp_for,
          crit ? "critical" : "warning",
          {{"summary", fmt::format("{{{{ $labels.host }}}} device {{{{ $labels.device }}}} is at "
                                   "{{{{ printf \"%.1f\" $value }}}} °C ({} at {} °C)",
                                   crit ? "throttling" : "hot", promql_number(limit))},
           {"description",
            crit ? "Check first: clocks and power (nvidia-smi -q -d PERFORMANCE / npu-smi info), "
                   "then the node's fans and inlet air; the device is slowing its clocks and "
                   "every collective it is in waits for it."
                 : "Check first: the node's fans, inlet temperature and airflow, and whether the "
                   "neighbouring devices are hot too (a rack problem) or only this one."}}};
}

AlertRule bandwidth_low(const AlertOptions& o) {
  return {"PlumbCollectiveBandwidthLow",
          fmt::format(R"({} < {})",
                      with_host(fmt::format(R"({}{{collective=~"{}"}})", series::kBusbw,
                                            collectives_regex(o))),
                      promql_number(gbps_to_bytes_per_second(o.bandwidth_min_gbps))),
          o.bandwidth_for, "warning",
          {{"summary", fmt::format("{{{{ $labels.collective }}}} busbw on layer "
                                   "{{{{ $labels.layer }}}} of {{{{ $labels.host }}}} is "
                                   "{{{{ printf \"%.0f\" $value }}}} B/s (below {} Gbit/s)",
                                   promql_number(o.bandwidth_min_gbps))},
           {"description",
            "Check first: link state and errors of the layer's NICs (ibstat, hccn_tool -i N "
            "-link -g), then compare with the stored baseline (plumb comm --layer, plumb diff)."}}};
}

// `subject` starts the summary: "Step on ", "Operator {{ $labels.operator }} on ".
AlertRule ratio_slow(const char* name, const char* metric, double jitter, const std::string& f,
                     const char* subject, const char* check) {
  const double limit = 1 + jitter;
  return {name, fmt::format("{} > {}", metric, promql_number(limit)), f, "warning",
          {{"summary",
            fmt::format("{}{{{{ $labels.host }}}} device {{{{ $labels.device }}}} took "
                        "{{{{ printf \"%.2f\" $value }}}} x its rolling median (above {})",
                        subject, promql_number(limit))},
           {"description", check}}};
}

AlertRule unhealthy(const AlertOptions& o) {
  return {"PlumbDeviceUnhealthy", fmt::format("{} == 0", series::kRecHealthy), o.unhealthy_for,
          "critical",
          {{"summary", "{{ $labels.host }} device {{ $labels.device }} reports itself unhealthy"},
           {"description",
            "Check first: the device's own report (npu-smi info -t health -i ID, or the XID in "
            "dmesg / nvidia-smi -q), then drain the host (plumb run --exclude-template) and run "
            "plumb recover --recover reset-device."}}};
}

AlertRule restart_loop(const AlertOptions& o) {
  // increase() extrapolates to the window's edges; round() keeps 3 restarts reading as 3.
  return {"PlumbRestartLoop",
          fmt::format("{} > {}",
                      with_host(fmt::format("round(increase({}[{}]))", series::kRunRestarts,
                                            o.restart_window)),
                      o.restarts_max),
          o.restart_for, "critical",
          {{"summary", fmt::format("plumb run restarted {{{{ $labels.job_name }}}} on "
                                   "{{{{ $labels.host }}}} {{{{ printf \"%.0f\" $value }}}} "
                                   "times in {} (more than {})",
                                   o.restart_window, o.restarts_max)},
           {"description",
            "Check first: the failure kinds (plumb_run_failures_total) and the job's last lines; "
            "the same failure after every restart is a bad host or a bad checkpoint, not bad "
            "luck."}}};
}

// ---- Faults: Xid, ECC, row remapping, links.

AlertRule xid_error(const AlertOptions& o) {
  std::vector<std::string> terms;
  for (int code : xid_code_list(o.xid_codes).value_or(std::vector<int>{})) {
    terms.push_back(fmt::format("{} == {}", kRecXidCode, code));
  }
  return {"PlumbXidError", join(terms, "\nor "), o.xid_for, "critical",
          {{"summary", "{{ $labels.host }} GPU {{ $labels.device }} reported Xid "
                       "{{ printf \"%.0f\" $value }}"},
           {"description",
            "Check first: the Xid's line in NVIDIA's Xid catalog (its immediate action: restart "
            "the application, reset the GPU, reboot the node or contact support) and the NVRM "
            "lines around it (dmesg | grep -i xid); drain the host (plumb run "
            "--exclude-template) before a reset."}}};
}

AlertRule ecc_uncorrectable(const AlertOptions&) {
  return {"PlumbEccUncorrectable", fmt::format("{} > 0", kRecEccUncorrectable), "", "critical",
          {{"summary", "{{ $labels.host }} device {{ $labels.device }} has "
                       "{{ printf \"%.0f\" $value }} uncorrectable (double-bit) ECC errors"},
           {"description",
            "Check first: nvidia-smi -q -d ECC,ROW_REMAPPER (npu-smi info -t ecc -i ID): a "
            "pending row remapping needs a GPU reset; drain the host, reset the device (plumb "
            "recover --recover reset-device) and run a memory diagnostic (dcgmi diag -r 3)."}}};
}

AlertRule row_remap_failed(const AlertOptions&) {
  return {"PlumbRowRemapFailed", fmt::format("{} > 0", kRecRowRemapFailed), "", "critical",
          {{"summary", "{{ $labels.host }} GPU {{ $labels.device }} failed to remap a memory row"},
           {"description",
            "Check first: nvidia-smi -q -d ROW_REMAPPER; a failed remapping (no spare rows left) "
            "is not repaired by a reset: drain the host and replace the GPU (NVIDIA's "
            "row-remapping guide)."}}};
}

AlertRule link_counter_alert(const char* name, const std::vector<Counter>& counters,
                             const std::string& window, int max, const char* severity,
                             const char* what, const char* check) {
  return {name, fmt::format("{} > {}", counters_sum(counters, window), max), "", severity,
          {{"summary", fmt::format("{{{{ $labels.host }}}} {{{{ $labels.device }}}}: "
                                   "{{{{ printf \"%.0f\" $value }}}} {} in {} (more than {})",
                                   what, window, max)},
           {"description", check}}};
}

AlertRule nvlink_errors(const AlertOptions& o) {
  return link_counter_alert(
      "PlumbNvlinkErrors", nvlink_error_counters(), o.link_window, o.link_errors_max, "warning",
      "NVLink errors (CRC, replay, recovery)",
      "Check first: nvidia-smi nvlink -e -i GPU (which link), then whether the same link keeps "
      "counting after a GPU reset; a link that does needs the baseboard or NVSwitch looked at "
      "(plumb comm --layer intra-node shows the bandwidth it costs).");
}

AlertRule nic_errors(const AlertOptions& o) {
  return link_counter_alert(
      "PlumbNicErrors", nic_error_counters(), o.link_window, o.link_errors_max, "warning",
      "NIC errors",
      "Check first: the port's counters (perfquery / ethtool -S, hccn_tool -i N -stat -g), the "
      "cable and optics (mlxlink, hccn_tool -i N -optical -g), then the switch port; symbol and "
      "receive errors that keep climbing mean a bad cable or transceiver.");
}

AlertRule link_flapping(const AlertOptions& o) {
  return link_counter_alert(
      "PlumbLinkFlapping", link_flap_counters(), o.link_window, o.link_flaps_max, "critical",
      "link-down events",
      "Check first: the port's state and down count (ibstat, ip -s link, hccn_tool -i N -link "
      "-g), the kernel log for the NIC, then the cable, optics and switch port; a link that "
      "goes down breaks every collective the host is in.");
}

// ---- YAML text, written directly so that the file reads like a hand-written one.

std::string single_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string block(const std::string& key, const std::string& text, int indent) {
  std::string pad(indent, ' ');
  std::string out = fmt::format("{}{}: |-\n", pad, key);
  for (const std::string& line : split_list(text, '\n')) out += fmt::format("{}  {}\n", pad, line);
  return out;
}

std::string recording_yaml(const RecordingRule& r) {
  return fmt::format("      - record: {}\n", r.record) + block("expr", r.expr, 8);
}

std::string alert_yaml(const AlertRule& a) {
  std::string out = fmt::format("      - alert: {}\n", a.name) + block("expr", a.expr, 8);
  if (duration_seconds(a.for_duration).value_or(0) > 0) {
    out += fmt::format("        for: {}\n", a.for_duration);
  }
  out += fmt::format("        labels:\n          severity: {}\n        annotations:\n", a.severity);
  for (const auto& [key, text] : a.annotations) {
    out += fmt::format("          {}: {}\n", key, single_quoted(text));
  }
  return out;
}

void check_positive(std::vector<std::string>& errors, const char* flag, double v) {
  if (!std::isfinite(v) || v <= 0) {
    errors.push_back(fmt::format("{} {}: expected a number above 0", flag, promql_number(v)));
  }
}

void check_duration(std::vector<std::string>& errors, const char* flag, const std::string& v,
                    bool allow_zero) {
  const std::optional<double> s = duration_seconds(v);
  if (!s) {
    errors.push_back(fmt::format(
        "{} '{}': expected a Prometheus duration such as 30s, 5m or 1h", flag, v));
  } else if (!allow_zero && *s <= 0) {
    errors.push_back(fmt::format("{} '{}': expected a duration above 0", flag, v));
  }
}

void check_collectives(std::vector<std::string>& errors, const std::string& list) {
  const std::vector<std::string> names = split_list(list);
  if (names.empty()) {
    errors.push_back(fmt::format("--bandwidth-collectives '{}': expected one or more of {}", list,
                                 join(known_collectives(), ", ")));
  }
  for (const std::string& name : names) {
    bool known = false;
    for (const std::string& k : known_collectives()) known = known || k == name;
    if (!known) {
      errors.push_back(unknown_name("--bandwidth-collectives", "collective", name,
                                    known_collectives()));
    }
  }
}

}  // namespace

void add_alert_options(CLI::App& app, AlertOptions& o) {
  app.add_option("--hbm-ratio", o.hbm_ratio, "PlumbHbmHigh: HBM used / total above this")
      ->capture_default_str();
  app.add_option("--hbm-for", o.hbm_for, "PlumbHbmHigh: for how long")->capture_default_str();
  app.add_option("--temp-warn", o.temp_warn, "PlumbDeviceHot: at or above, °C")
      ->capture_default_str();
  app.add_option("--temp-crit", o.temp_crit, "PlumbDeviceThrottling: at or above, °C")
      ->capture_default_str();
  app.add_option("--temp-for", o.temp_for, "PlumbDeviceHot and PlumbDeviceThrottling: for how long")
      ->capture_default_str();
  app.add_option("--bandwidth-min-gbps", o.bandwidth_min_gbps,
                 "PlumbCollectiveBandwidthLow: busbw below this, Gbit/s")
      ->capture_default_str();
  app.add_option("--bandwidth-for", o.bandwidth_for, "PlumbCollectiveBandwidthLow: for how long")
      ->capture_default_str();
  app.add_option("--bandwidth-collectives", o.bandwidth_collectives,
                 "PlumbCollectiveBandwidthLow: the collectives it watches (comma list)")
      ->capture_default_str();
  app.add_option("--op-jitter", o.op_jitter,
                 "PlumbOperatorSlow: an operator's last time above (1 + this) x its rolling median")
      ->capture_default_str();
  app.add_option("--op-for", o.op_for, "PlumbOperatorSlow: for how long")->capture_default_str();
  app.add_option("--step-jitter", o.step_jitter,
                 "PlumbStepSlow: the last step above (1 + this) x its rolling median")
      ->capture_default_str();
  app.add_option("--step-for", o.step_for, "PlumbStepSlow: for how long")->capture_default_str();
  app.add_option("--unhealthy-for", o.unhealthy_for, "PlumbDeviceUnhealthy: for how long")
      ->capture_default_str();
  app.add_option("--restarts-max", o.restarts_max,
                 "PlumbRestartLoop: more restarts than this within --restart-window")
      ->capture_default_str();
  app.add_option("--restart-window", o.restart_window, "PlumbRestartLoop: the window")
      ->capture_default_str();
  app.add_option("--restart-for", o.restart_for, "PlumbRestartLoop: for how long")
      ->capture_default_str();
  app.add_option("--xid-codes", o.xid_codes,
                 "PlumbXidError: the Xid codes that fire (comma list, NVIDIA's Xid catalog)")
      ->capture_default_str();
  app.add_option("--xid-for", o.xid_for, "PlumbXidError: for how long")->capture_default_str();
  app.add_option("--link-window", o.link_window,
                 "PlumbNvlinkErrors, PlumbNicErrors, PlumbLinkFlapping: the window the counters "
                 "increase over")
      ->capture_default_str();
  app.add_option("--link-errors-max", o.link_errors_max,
                 "PlumbNvlinkErrors and PlumbNicErrors: more errors than this in the window")
      ->capture_default_str();
  app.add_option("--link-flaps-max", o.link_flaps_max,
                 "PlumbLinkFlapping: more link-down events than this in the window")
      ->capture_default_str();
}

void validate_alert_options(const AlertOptions& o) {
  std::vector<std::string> errors;
  if (!std::isfinite(o.hbm_ratio) || o.hbm_ratio <= 0 || o.hbm_ratio > 1) {
    errors.push_back(fmt::format("--hbm-ratio {}: expected a ratio in (0, 1]",
                                 promql_number(o.hbm_ratio)));
  }
  if (!std::isfinite(o.temp_warn) || !std::isfinite(o.temp_crit) || o.temp_warn >= o.temp_crit) {
    errors.push_back(fmt::format("--temp-warn {} must be below --temp-crit {}",
                                 promql_number(o.temp_warn), promql_number(o.temp_crit)));
  }
  check_positive(errors, "--bandwidth-min-gbps", o.bandwidth_min_gbps);
  check_positive(errors, "--op-jitter", o.op_jitter);
  check_positive(errors, "--step-jitter", o.step_jitter);
  if (o.restarts_max < 0) {
    errors.push_back(fmt::format("--restarts-max {}: expected 0 or more", o.restarts_max));
  }
  check_collectives(errors, o.bandwidth_collectives);
  check_duration(errors, "--hbm-for", o.hbm_for, true);
  check_duration(errors, "--temp-for", o.temp_for, true);
  check_duration(errors, "--bandwidth-for", o.bandwidth_for, true);
  check_duration(errors, "--op-for", o.op_for, true);
  check_duration(errors, "--step-for", o.step_for, true);
  check_duration(errors, "--unhealthy-for", o.unhealthy_for, true);
  check_duration(errors, "--restart-window", o.restart_window, false);
  check_duration(errors, "--restart-for", o.restart_for, true);
  if (!xid_code_list(o.xid_codes)) {
    errors.push_back(fmt::format(
        "--xid-codes '{}': expected a comma list of Xid codes, whole numbers 1 to {}", o.xid_codes,
        kMaxXid));
  }
  check_duration(errors, "--xid-for", o.xid_for, true);
  check_duration(errors, "--link-window", o.link_window, false);
  if (const auto w = duration_seconds(o.link_window); w && *w > 0 && *w < kMinLinkWindow) {
    errors.push_back(fmt::format(
        "--link-window '{}': expected 1m or more (increase() needs several scrapes in it)",
        o.link_window));
  }
  for (const auto& [flag, v] : {std::pair{"--link-errors-max", o.link_errors_max},
                                {"--link-flaps-max", o.link_flaps_max}}) {
    if (v < 0) errors.push_back(fmt::format("{} {}: expected 0 or more", flag, v));
  }
  if (!errors.empty()) throw Error(join(errors, "\n"));
}

std::optional<std::vector<int>> xid_code_list(const std::string& text) {
  static const Regex kCode("[0-9]{1,3}");
  std::vector<int> codes;
  for (const std::string& item : split_list(text)) {
    if (!kCode.match(item) || std::stoi(item) < 1) return std::nullopt;
    codes.push_back(std::stoi(item));
  }
  if (codes.empty()) return std::nullopt;
  return codes;
}

// Prometheus' model.ParseDuration: units y w d h m s ms, each at most once, largest first.
std::optional<double> duration_seconds(std::string_view text) {
  static const Regex kDuration(
      "(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?");
  static constexpr double kUnit[] = {365 * 86400.0, 7 * 86400.0, 86400, 3600, 60, 1, 0.001};
  std::array<std::string_view, 15> m;  // the whole match, then 2 groups per unit
  if (text.empty() || text.size() > 40 || !kDuration.match(text, m)) return std::nullopt;
  double seconds = 0;
  for (size_t i = 0; i < std::size(kUnit); ++i) {
    const std::string_view digits = m[2 * i + 2];
    if (digits.data() != nullptr) seconds += std::stod(std::string(digits)) * kUnit[i];
  }
  return seconds;
}

// Gbit/s as network people mean it: 1e9 bits, 8 bits a byte.
double gbps_to_bytes_per_second(double gbps) { return gbps * 1e9 / 8; }

const std::vector<std::string>& known_collectives() {
  static const std::vector<std::string> kNames = {"allreduce", "allgather", "reducescatter",
                                                  "alltoall",  "broadcast", "reduce",
                                                  "sendrecv"};
  return kNames;
}

std::vector<RecordingRule> recording_rules() {
  std::vector<RecordingRule> rules;
  for (const Normalised& n : normalised_table()) {
    std::vector<std::string> parts;
    for (const Spelling& s : n.spellings) parts.push_back(normalised(n, s));
    rules.push_back({n.record, join(parts, "\nor\n")});
  }
  return rules;
}

std::vector<AlertRule> alert_rules(const AlertOptions& o) {
  return {
      hbm_high(o),
      temperature(o, false),
      temperature(o, true),
      bandwidth_low(o),
      ratio_slow("PlumbOperatorSlow", series::kOpRatio, o.op_jitter, o.op_for,
                 "Operator {{ $labels.operator }} on ",
                 "Check first: whether every rank shows it (data or shape change) or one device "
                 "(that device's clocks and temperature, plumb step on a profiler trace)."),
      ratio_slow("PlumbStepSlow", series::kStepRatio, o.step_jitter, o.step_for, "Step on ",
                 "Check first: collective bandwidth (PlumbCollectiveBandwidthLow), a straggler "
                 "rank (plumb step), data loading and checkpoint writes at that step."),
      unhealthy(o),
      restart_loop(o),
      xid_error(o),
      ecc_uncorrectable(o),
      row_remap_failed(o),
      nvlink_errors(o),
      nic_errors(o),
      link_flapping(o),
  };
}

std::string rules_yaml(const AlertOptions& o) {
  std::string out =
      "# Written by plumb alerts rules: normalised device series (plumb:*) and plumb's alerts.\n"
      "# docs/alerts.md explains every rule. Check: promtool check rules FILE\n"
      "groups:\n  - name: plumb-normalise\n    rules:\n";
  for (const RecordingRule& r : recording_rules()) out += recording_yaml(r);
  out += "  - name: plumb-alerts\n    rules:\n";
  for (const AlertRule& a : alert_rules(o)) out += alert_yaml(a);
  return out;
}

std::string expand_template(std::string_view text,
                            const std::vector<std::pair<std::string, std::string>>& labels,
                            double value) {
  static const Regex kField(R"(\{\{ (\$labels\.([A-Za-z_][A-Za-z0-9_]*)|printf "%\.([0-9])f" \$value) \}\})");
  std::string out;
  std::string_view rest = text;
  std::array<std::string_view, 4> m;  // the field, its inside, a label's name, printf's digits
  while (kField.search(rest, m)) {
    out += rest.substr(0, static_cast<size_t>(m[0].data() - rest.data()));
    if (m[2].data() != nullptr) {
      for (const auto& [name, v] : labels) {
        if (name == m[2]) out += v;
      }
    } else {
      out += fmt::format("{:.{}f}", value, m[3][0] - '0');
    }
    rest.remove_prefix(static_cast<size_t>(m[0].data() + m[0].size() - rest.data()));
  }
  return out + std::string(rest);
}

std::string promql_number(double value) { return fmt::format("{}", value); }

}  // namespace plumb::exporter
