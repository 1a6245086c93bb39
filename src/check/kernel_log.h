// NVIDIA Xid events in the kernel log (`dmesg`, `journalctl -k -b`), and what each Xid means for a
// node check. The driver writes "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the
// bus." (older drivers: "NVRM: Xid (0000:3b:00): 79, ..."); newer drivers also write the
// fallen-off-the-bus case as "NVRM: The NVIDIA GPU 0000:b3:00.0 ... has fallen off the bus" over
// several lines, with no Xid, which is read as Xid 79. The table follows NVIDIA's Xid catalog
// (docs.nvidia.com/deploy/xid-errors), its "immediate action" column deciding the severity.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "check/status.h"

namespace plumb::check {

struct XidEvent {
  std::string bus_id;  // "0000:3b:00.0" (normal_bus_id of the line's "0000:3b:00")
  int code = 0;
  std::string message;  // the line's text after "<code>, " (pid and name included), shortened
};

// Every Xid of the log, in order; lines that are not Xid lines are skipped. Never throws: a line
// that looks like an Xid but has no number is skipped too.
std::vector<XidEvent> parse_xid_events(std::string_view log);

struct XidInfo {
  int code;
  Status severity;          // kOk: the application's own fault, nothing to do on the node
  std::string_view name;    // "GPU has fallen off the bus"
  std::string_view action;  // the one line to check first
};

// The table, in code order.
std::span<const XidInfo> xid_table();
// The row for `code`, or nullptr for a code the table does not hold.
const XidInfo* find_xid(int code);

}  // namespace plumb::check
