// plumb check node --npd: a custom plugin of Kubernetes' node-problem-detector (NPD). NPD runs the
// plugin every invoke_interval and reads its exit status (0 OK, 1 NonOK, anything else Unknown;
// pkg/custompluginmonitor/types/types.go) and its standard output, trimmed and cut to
// max_output_length bytes (80 by default; types/config.go), as the node condition's message.
// contrib/npd/plumb-check-monitor.json is the monitor's config; docs/check.md.
#pragma once

#include <cstddef>
#include <string>

#include "check/node_run.h"
#include "check/status.h"

namespace plumb::check {

// NPD's exit statuses (pkg/custompluginmonitor/types/types.go: OK, NonOK, Unknown).
enum class NpdStatus { kOk = 0, kNonOk = 1, kUnknown = 2 };

// NPD's default max_output_length (pkg/custompluginmonitor/types/config.go).
inline constexpr size_t kNpdDefaultMaxOutput = 80;

struct NpdResult {
  NpdStatus status = NpdStatus::kUnknown;
  std::string message;  // one line, at most max_output bytes
};

// NonOK when a check is at `fail_on` or worse, Unknown when none is but some could not be judged,
// else OK; the message names the worst finding: "critical: pcie.link: mlx5_0 at x8 (+1 more)",
// "ok: 14 checks passed", "unknown: could not judge accel.health".
NpdResult npd_result(const NodeReport& report, Status fail_on, size_t max_output);

}  // namespace plumb::check
