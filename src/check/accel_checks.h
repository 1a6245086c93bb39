// The accelerator checks' strategies, one function per check and vendor; accelerator_checks.cc
// puts them in the table (docs/check.md).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "check/accel_probe.h"
#include "check/check.h"

namespace plumb::check {

// accel.count (accel_count_health.cc)
CheckResult run_accel_count(const NodeContext& context, const CheckSection& section);
YAML::Node observe_accel_count(const NodeContext& context);
// accel.health (accel_count_health.cc)
CheckResult nvidia_health(const AccelRun& run);
CheckResult ascend_health(const AccelRun& run);
// accel.ecc, accel.clocks, accel.temperature (accel_gpu_checks.cc)
CheckResult nvidia_ecc(const AccelRun& run);
CheckResult ascend_ecc(const AccelRun& run);
CheckResult nvidia_clocks(const AccelRun& run);
CheckResult ascend_clocks(const AccelRun& run);
CheckResult nvidia_temperature(const AccelRun& run);
CheckResult ascend_temperature(const AccelRun& run);
// accel.xid (accel_xid_check.cc)
CheckResult nvidia_xid(const AccelRun& run);
CheckResult ascend_xid(const AccelRun& run);

// Runs the tools at once, each with the context's deadline (a node's 8 or 16 per-chip npu-smi
// queries take as long as the slowest, not as their sum).
std::vector<ToolRun> run_tools(const NodeContext& context,
                               const std::vector<std::vector<std::string>>& commands);

}  // namespace plumb::check
