// plumb dashboard: the Grafana dashboard JSON on the plumb: series (docs/alerts.md, "The
// dashboard"); its threshold lines take the same options as plumb alerts rules.
#pragma once

#include <string>

#include "exporter/dashboard.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct DashboardCommandOptions {
  exporter::DashboardOptions dashboard;
  std::string output = "-";
};

void setup_dashboard(CLI::App& app, DashboardCommandOptions& options);
int run_dashboard(const DashboardCommandOptions& options);

}  // namespace plumb::cli
