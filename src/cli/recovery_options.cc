#include "cli/recovery_options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/strings.h"

namespace plumb::cli {

void add_recovery_options(CLI::App& app, RecoveryArgs& a) {
  app.add_option("--recover", a.recover,
                 "Recovery steps after a failure, in order: clear-cache, reset-device, link-check");
  app.add_option("--vendor", a.config.vendor, "Whose tools do the steps: auto, nvidia, ascend")
      ->capture_default_str();
  app.add_option("--devices", a.config.devices,
                 "The devices the steps touch (NVIDIA index, Ascend NPU ID: 0,1,3); default all");
  app.add_option("--on-failure", a.config.on_failure,
                 "A site's own recovery command (sh -c), after the built-in steps; repeatable. "
                 "An output line 'plumb: unusable host NAME' leaves NAME out of the relaunch");
  app.add_option("--recover-timeout", a.config.step_timeout_s,
                 "Seconds each recovery step may take before it is killed and fails")
      ->capture_default_str();
  app.add_option("--link-rechecks", a.config.link_rechecks,
                 "A link found down is looked at again this many times before the host is unusable")
      ->capture_default_str()->check(CLI::Range(0, 1000));
  app.add_option("--link-recheck-interval", a.config.link_recheck_interval_s,
                 "Seconds between those looks")
      ->capture_default_str()->check(CLI::Range(0.0, 3600.0));
}

std::optional<supervise::RecoveryPlan> recovery_plan(const RecoveryArgs& a) {
  supervise::RecoveryConfig config = a.config;
  if (!a.recover.empty()) config.steps = split_list(a.recover);
  supervise::RecoveryPlan plan = supervise::make_recovery_plan(config);
  if (plan.empty()) return std::nullopt;
  return plan;
}

std::string recovery_step_line(const nlohmann::json& e) {
  std::string detail = e.value("detail", "");
  return fmt::format("recovery step {}: {} ({:.2f} s){}", e.value("name", "?"),
                     e.value("ok", false) ? "ok" : "FAILED", e.value("seconds", 0.0),
                     detail.empty() ? "" : " " + detail);
}

}  // namespace plumb::cli
