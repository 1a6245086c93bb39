// accel.xid: NVIDIA Xid events in the kernel log since boot (docs/check.md).
#include <fmt/format.h>

#include <charconv>
#include <map>
#include <set>

#include "check/accel_checks.h"
#include "check/kernel_log.h"
#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

// The kernel log since boot: dmesg's ring buffer, else the journal's kernel messages of this boot
// (dmesg needs CAP_SYSLOG where kernel.dmesg_restrict is set; the journal may be readable).
struct KernelLog {
  std::optional<std::string> text;
  std::string source;  // "dmesg" or "journalctl -k -b"
  std::string problem;
};

KernelLog read_kernel_log(const NodeContext& context) {
  KernelLog log;
  const ToolRun dmesg = context.tool({"dmesg"});
  if (dmesg.ok()) return {dmesg.output, "dmesg", {}};
  if (dmesg.state == ToolRun::State::kTimedOut) {  // a second deadline would outlast the check's
    log.problem = "the kernel log could not be read: " + tool_failure(dmesg, false).detail;
    return log;
  }
  const ToolRun journal = context.tool({"journalctl", "-k", "-b", "--no-pager", "-q"});
  if (journal.ok()) return {journal.output, "journalctl -k -b", {}};
  log.problem = fmt::format("the kernel log could not be read: {}; {}",
                            tool_failure(dmesg, false).detail, tool_failure(journal, false).detail);
  return log;
}

std::set<int> ignored_codes(const CheckSection& section) {
  std::set<int> codes;
  for (const std::string& item : section.text_list("ignore")) {
    int code = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), code);
    if (ec != std::errc() || end != item.data() + item.size() || code < 0) {
      throw Error(fmt::format("checks.accel.xid.ignore: every item must be an Xid number, got '{}'",
                              terminal_safe(shorten(item))));
    }
    codes.insert(code);
  }
  return codes;
}

constexpr std::string_view kUnknownXidAction =
    "look the Xid up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors) and at the lines "
    "around it (dmesg | grep -i xid)";

}  // namespace

CheckResult nvidia_xid(const AccelRun& run) {
  const std::set<int> ignore = ignored_codes(run.section);
  const KernelLog log = read_kernel_log(run.context);
  if (!log.text) return unknown(log.problem);
  // One line per GPU and Xid, in the order first seen, with how often it happened.
  std::map<std::pair<std::string, int>, int> seen;
  std::vector<std::pair<std::string, int>> order;
  for (const XidEvent& event : parse_xid_events(*log.text)) {
    if (ignore.count(event.code)) continue;
    const auto key = std::make_pair(event.bus_id, event.code);
    if (seen[key]++ == 0) order.push_back(key);
  }
  Findings findings;
  for (const auto& key : order) {
    const XidInfo* info = find_xid(key.second);
    const std::string what = info ? std::string(info->name) : std::string("not in plumb's table");
    const std::string times = seen[key] > 1 ? fmt::format(" ({} times)", seen[key]) : std::string();
    findings.add(info ? info->severity : Status::kWarning,
                 fmt::format("Xid {} on {}: {}{}", key.second, key.first, what, times),
                 info ? info->action : kUnknownXidAction);
  }
  return findings.result(
      fmt::format("no Xid of warning or critical severity since boot ({})", log.source),
      "no Xid that needs a reset, a reboot or a replacement");
}

CheckResult ascend_xid(const AccelRun&) {
  return skipped(
      "Ascend: the NPU's fault codes are judged by accel.health (npu-smi info -t health); "
      "the driver's kernel-log lines have no public format plumb could test against");
}

}  // namespace plumb::check
