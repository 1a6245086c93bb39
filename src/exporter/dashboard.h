// `plumb dashboard`: one Grafana dashboard built only on the plumb: series of the recording rules
// and on plumb's own series, so that it works with dcgm-exporter, npu-exporter or plumb exporter
// behind it. The threshold lines come from the same AlertOptions as the alerts.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "exporter/rules.h"

namespace plumb::exporter {

// Grafana 11's dashboard schema (the version Grafana 11.0 writes).
inline constexpr int kGrafanaSchemaVersion = 39;

struct DashboardOptions {
  std::string title = "plumb: devices, communication, training";
  std::string uid = "plumb-cluster";
  AlertOptions alerts;
};

// Every bad option at once (the alert thresholds too); throws Error (exit 2).
void validate_dashboard_options(const DashboardOptions& options);

nlohmann::json dashboard_json(const DashboardOptions& options);

// Every PromQL expression of the dashboard's panels, as written (with $host, $device and
// $__rate_interval in them), in panel order.
std::vector<std::string> dashboard_expressions(const nlohmann::json& dashboard);

}  // namespace plumb::exporter
