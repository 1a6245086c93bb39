// Whether this node's clock is synchronised, from the time daemon it runs: chrony
// (`chronyc -n tracking`, its "System time" offset and "Leap status"), else systemd-timesyncd
// (`timedatectl show`, NTPSynchronized=). docs/check.md, "host.clock".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "check/node_context.h"

namespace plumb::check {

struct ClockState {
  std::string source;              // the tool that answered; empty when none did
  bool synchronised = false;
  std::optional<double> offset_s;  // this clock minus the reference (chrony: "fast" is positive)
  std::string problem;             // no tool: why; a tool answered but unreadably: what
  std::string advice;              // the command to look further with
};

// `chronyc -n tracking`'s text. Nothing for text that holds neither "Leap status" nor
// "System time".
std::optional<ClockState> parse_chronyc_tracking(std::string_view text);
// `timedatectl show`'s text: NTPSynchronized=yes|no. Nothing without that property.
std::optional<ClockState> parse_timedatectl_show(std::string_view text);

ClockState read_clock_state(const NodeContext& ctx);

}  // namespace plumb::check
