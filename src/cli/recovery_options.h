// The recovery-step options `plumb run` and `plumb recover` share (--recover, --vendor, --devices,
// --on-failure, --recover-timeout, --link-rechecks, --link-recheck-interval; docs/run.md
// "Recovery steps").
#pragma once

#include <optional>
#include <string>

#include "supervise/recovery.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct RecoveryArgs {
  std::string recover;                // "clear-cache,reset-device,link-check"
  supervise::RecoveryConfig config;
};

void add_recovery_options(CLI::App& app, RecoveryArgs& args);

// The validated plan (an Error, exit 2, for a bad option or a missing tool), or none when neither
// --recover nor --on-failure was given.
std::optional<supervise::RecoveryPlan> recovery_plan(const RecoveryArgs& args);

// What the console says of a recovery_step event: "plumb run: recovery step reset-device: ok
// (1.20 s) reset 8 devices".
std::string recovery_step_line(const nlohmann::json& event);

}  // namespace plumb::cli
