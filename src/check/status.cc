#include "check/status.h"

#include <array>

namespace plumb::check {
namespace {

struct StatusName {
  Status status;
  std::string_view name;
  int severity;  // the fold order of worse(): higher wins
};

constexpr std::array<StatusName, 4> kStatuses = {{
    {Status::kOk, "ok", 0},
    {Status::kUnknown, "unknown", 1},
    {Status::kWarning, "warning", 2},
    {Status::kCritical, "critical", 3},
}};

const StatusName& entry(Status status) {
  for (const StatusName& s : kStatuses) {
    if (s.status == status) return s;
  }
  return kStatuses[1];
}

}  // namespace

std::string_view status_name(Status status) { return entry(status).name; }

std::optional<Status> parse_status(std::string_view name) {
  for (const StatusName& s : kStatuses) {
    if (s.name == name) return s.status;
  }
  return std::nullopt;
}

Status worse(Status a, Status b) { return entry(a).severity >= entry(b).severity ? a : b; }

}  // namespace plumb::check
