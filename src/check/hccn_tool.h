// Ascend's hccn_tool outputs that net.roce judges (docs/check.md; formats and their sources in
// tests/fixtures/check/hccn_tool/SOURCES.md):
//   hccn_tool -i 0 -link -g             link status: UP
//   hccn_tool -i 0 -net_health -g       net health status: Success
//   hccn_tool -i 0 -pfc -g              PFC configuration: / priority 0 1 ... / enabled 0 0 0 0 1 ...
//   hccn_tool -i 0 -dscp_to_tc -g dscp 48   one line holding the DSCP and its traffic class
// The readers never throw; nothing means "not the expected output".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::check {

// "UP", "DOWN" (as printed).
std::optional<std::string> parse_hccn_link(std::string_view text);
// "Success", "Fault", "Init", ... (as printed).
std::optional<std::string> parse_hccn_net_health(std::string_view text);
// The priorities with PFC enabled.
std::optional<std::vector<int>> parse_hccn_pfc(std::string_view text);
// DSCP -> traffic class: every line holding exactly two numbers, a DSCP (0-63) first and a TC
// (0-7) after it, in whatever words around them ("48 4", "dscp 48 tc 4", "dscp:48, tc:4").
std::map<int, int> parse_hccn_dscp_to_tc(std::string_view text);

// The first line of a tool's output, cut to 60 characters, for "unexpected output '...'".
std::string output_excerpt(std::string_view text);

}  // namespace plumb::check
