#include "cli/alerts_command.h"

#include <CLI/CLI.hpp>

#include "common/output_file.h"
#include "exporter/rule_tests.h"

namespace plumb::cli {
namespace {

CLI::App* add_mode(CLI::App& app, AlertsOptions& o, AlertsMode mode, const char* name,
                   const char* summary) {
  CLI::App* sub = app.add_subcommand(name, summary);
  exporter::add_alert_options(*sub, o.alerts);
  sub->add_option("-o,--output", o.output, "Write the file here (- for standard output)")
      ->capture_default_str();
  sub->callback([&o, mode] { o.mode = mode; });
  return sub;
}

}  // namespace

void setup_alerts(CLI::App& app, AlertsOptions& o) {
  app.require_subcommand(1);
  add_mode(app, o, AlertsMode::kRules, "rules",
           "The rule file: plumb: series from dcgm-exporter, npu-exporter and plumb exporter, and "
           "plumb's alerts (check: promtool check rules FILE)");
  CLI::App* test = add_mode(app, o, AlertsMode::kTest, "test",
                            "promtool unit tests of that rule file with the same thresholds "
                            "(run: promtool test rules FILE)");
  test->add_option("--rules", o.rules,
                   "The rule file the tests load, as promtool sees it from the test file's folder")
      ->capture_default_str();
  app.footer("Exit status: 0 ok; 2 bad usage (a threshold out of range, a duration that is not "
             "a Prometheus duration, an unknown collective).");
}

int run_alerts(const AlertsOptions& o) {
  exporter::validate_alert_options(o.alerts);
  const std::string text = o.mode == AlertsMode::kRules
                               ? exporter::rules_yaml(o.alerts)
                               : exporter::rule_tests_yaml(o.alerts, o.rules);
  write_output("-o", o.output, text);
  return 0;
}

}  // namespace plumb::cli
