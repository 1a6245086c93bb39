// plumb check: the verdict of one check, in the monitoring-plugin convention (Nagios, Icinga,
// Meta's GCM health checks): 0 ok, 1 warning, 2 critical, 3 unknown.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace plumb::check {

enum class Status { kOk = 0, kWarning = 1, kCritical = 2, kUnknown = 3 };

// "ok", "warning", "critical", "unknown": the words of plumb.check/1 and the console.
std::string_view status_name(Status status);
// The word back, or nothing.
std::optional<Status> parse_status(std::string_view name);

// The process exit code of a node whose worst check has `status`: the status's own number.
inline int exit_code(Status status) { return static_cast<int>(status); }

// The worse of two, in the order the monitoring plugins fold several results (max_state_alt):
// critical > warning > unknown > ok. A node with one warning and one check that could not run
// is "warning": the warning is known, the unknown is not evidence of a fault.
Status worse(Status a, Status b);

}  // namespace plumb::check
