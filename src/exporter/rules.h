// `plumb alerts rules`: the Prometheus rule file. One group of recording rules turns every known
// spelling of a device metric (dcgm-exporter before and from 4.9, its 1.x names, npu-exporter
// with old and new labels, plumb exporter) into one plumb: series in base units with `host` and
// `device` labels; one group of alerting rules uses only those series and plumb's own. Every
// threshold and `for:` is an AlertOptions field, so the tests (rule_tests.h) and the dashboard
// (dashboard.h) follow the same numbers. docs/alerts.md explains each rule and its source.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::exporter {

// The seed's thresholds are the defaults (docs/alerts.md, "Why these numbers").
struct AlertOptions {
  double hbm_ratio = 0.90;          // PlumbHbmHigh: used / total above this
  std::string hbm_for = "5m";
  double temp_warn = 85;            // PlumbDeviceHot: at or above, degrees Celsius
  double temp_crit = 95;            // PlumbDeviceThrottling: at or above
  std::string temp_for = "1m";
  double bandwidth_min_gbps = 10;   // PlumbCollectiveBandwidthLow: busbw below, Gbit/s (1e9 bit)
  std::string bandwidth_for = "30s";
  std::string bandwidth_collectives = "allreduce";  // the collectives the floor applies to
  double op_jitter = 2.0;           // PlumbOperatorSlow: last > (1 + jitter) x rolling median
  std::string op_for = "1m";
  double step_jitter = 0.5;         // PlumbStepSlow: last > (1 + jitter) x rolling median
  std::string step_for = "1m";
  std::string unhealthy_for = "1m";  // PlumbDeviceUnhealthy
  int restarts_max = 3;             // PlumbRestartLoop: more restarts than this in the window
  std::string restart_window = "1h";
  std::string restart_for = "1m";
  // PlumbXidError: the Xid codes that need an operator (NVIDIA's Xid catalog, docs/alerts.md);
  // an Xid not on the list (most are the application's own faults) does not fire.
  std::string xid_codes = "13,31,43,45,48,61,62,63,64,68,69,74,79,92,94,95,119,120,140";
  std::string xid_for = "0s";
  // PlumbNvlinkErrors, PlumbNicErrors, PlumbLinkFlapping: counters' increase over the window.
  std::string link_window = "10m";
  int link_errors_max = 0;          // NVLink and NIC/RoCE/IB errors: more than this fires
  int link_flaps_max = 0;           // link-down events: more than this fires
};

// The normalised fault series (the others are in series.h): the last Xid a GPU reported (0 none),
// its volatile uncorrectable (double-bit) ECC errors since the driver loaded, and whether a row
// remapping failed (1) on it.
inline constexpr const char* kRecXidCode = "plumb:device_xid_code";
inline constexpr const char* kRecEccUncorrectable = "plumb:device_ecc_uncorrectable_errors";
inline constexpr const char* kRecRowRemapFailed = "plumb:device_row_remap_failed";

// The Xid codes of --xid-codes, in order; nothing when the list is not whole numbers 1 to 999.
std::optional<std::vector<int>> xid_code_list(const std::string& text);

// Declares every threshold as an option (--hbm-ratio, --temp-warn, ...) on `app`.
void add_alert_options(CLI::App& app, AlertOptions& options);

// Checks every option at once; throws Error (exit 2) listing each bad one on its own line.
void validate_alert_options(const AlertOptions& options);

// Seconds of a Prometheus duration ("30s", "5m", "1h30m", "250ms"); nothing when it is not one.
std::optional<double> duration_seconds(std::string_view text);

// busbw in bytes per second for a floor in Gbit/s: gbps x 1e9 / 8.
double gbps_to_bytes_per_second(double gbps);

// The collective names plumb comm measures (the `collective` label of the busbw series).
const std::vector<std::string>& known_collectives();

struct RecordingRule {
  std::string record;
  std::string expr;
};

using TemplateText = std::vector<std::pair<std::string, std::string>>;  // name, template

struct AlertRule {
  std::string name;
  std::string expr;
  std::string for_duration;  // "" or "0s": fires at once
  std::string severity;      // "warning" | "critical"
  TemplateText annotations;  // summary, description; templates use only {{ $labels.X }} and
                             // {{ printf "%.Nf" $value }} (expand_template reproduces them)
};

std::vector<RecordingRule> recording_rules();
std::vector<AlertRule> alert_rules(const AlertOptions& options);

// The whole rule file (groups plumb-normalise and plumb-alerts), stable text.
std::string rules_yaml(const AlertOptions& options);

// What Prometheus makes of an annotation template for an alert with these labels and value
// (only the two forms the rules use), so that the unit tests can expect the exact text.
std::string expand_template(std::string_view text,
                            const std::vector<std::pair<std::string, std::string>>& labels,
                            double value);

// A number as PromQL and promtool read it back exactly (shortest round-trip form).
std::string promql_number(double value);

}  // namespace plumb::exporter
