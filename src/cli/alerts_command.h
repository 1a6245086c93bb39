// plumb alerts rules|test: the Prometheus rule file that normalises every exporter's spelling
// into plumb: series and holds plumb's alerts, and the promtool unit tests of that file with the
// same thresholds (docs/alerts.md).
#pragma once

#include <string>

#include "exporter/rules.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

enum class AlertsMode { kRules, kTest };

struct AlertsOptions {
  AlertsMode mode = AlertsMode::kRules;
  exporter::AlertOptions alerts;
  std::string output = "-";      // -o: the file written ("-": standard output)
  std::string rules = "r.yml";   // test: the rule file promtool loads (relative to the test file)
};

void setup_alerts(CLI::App& app, AlertsOptions& options);
int run_alerts(const AlertsOptions& options);

}  // namespace plumb::cli
