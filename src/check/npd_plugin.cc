#include "check/npd_plugin.h"

#include <fmt/format.h>

#include "check/slurm_drain.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

int checks_ran(const NodeReport& report) {
  int n = 0;
  for (const CheckResult& c : report.checks) n += c.skipped ? 0 : 1;
  return n;
}

// The worst findings as the drain reason names them, without its "plumb: " leader.
std::string worst_findings(const NodeReport& report) {
  std::string reason = slurm_drain_reason(report);
  const std::string leader = std::string(kSlurmReasonLeader) + " ";
  if (reason.rfind(leader, 0) == 0) reason.erase(0, leader.size());
  return reason;
}

std::string message_for(const NodeReport& report, SchedulerVerdict verdict) {
  const Status status = report.status();
  if (verdict == SchedulerVerdict::kUndecided) {
    return fmt::format("unknown: could not judge {}", join(unknown_check_names(report), ", "));
  }
  if (status == Status::kOk || status == Status::kUnknown) {
    return fmt::format("ok: {} check{} passed", checks_ran(report),
                       checks_ran(report) == 1 ? "" : "s");
  }
  return fmt::format("{}: {}", status_name(status), worst_findings(report));
}

// NPD cuts at max_output bytes, possibly inside a character; this cuts at a whole one.
std::string fit(std::string message, size_t max_output) {
  if (message.size() <= max_output) return message;
  constexpr std::string_view kEllipsis = "...";
  const size_t room = max_output > kEllipsis.size() ? max_output - kEllipsis.size() : max_output;
  message.resize(complete_utf8_prefix(std::string_view(message).substr(0, room)));
  return room < max_output ? message + std::string(kEllipsis) : message;
}

}  // namespace

NpdResult npd_result(const NodeReport& report, Status fail_on, size_t max_output) {
  const SchedulerVerdict verdict = scheduler_verdict(report, fail_on);
  NpdResult r;
  r.status = verdict == SchedulerVerdict::kFail   ? NpdStatus::kNonOk
             : verdict == SchedulerVerdict::kPass ? NpdStatus::kOk
                                                  : NpdStatus::kUnknown;
  r.message = fit(message_for(report, verdict), max_output);
  return r;
}

}  // namespace plumb::check
