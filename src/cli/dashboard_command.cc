#include "cli/dashboard_command.h"

#include <CLI/CLI.hpp>

#include "common/output_file.h"

namespace plumb::cli {

void setup_dashboard(CLI::App& app, DashboardCommandOptions& o) {
  app.add_option("--title", o.dashboard.title, "The dashboard's title")->capture_default_str();
  app.add_option("--uid", o.dashboard.uid, "The dashboard's Grafana uid")->capture_default_str();
  exporter::add_alert_options(app, o.dashboard.alerts);
  app.add_option("-o,--output", o.output, "Write the JSON here (- for standard output)")
      ->capture_default_str();
  app.footer("Exit status: 0 ok; 2 bad usage (an empty title, a uid Grafana refuses, a "
             "threshold out of range).");
}

int run_dashboard(const DashboardCommandOptions& o) {
  exporter::validate_dashboard_options(o.dashboard);
  write_output("-o", o.output, exporter::dashboard_json(o.dashboard).dump(2) + "\n");
  return 0;
}

}  // namespace plumb::cli
