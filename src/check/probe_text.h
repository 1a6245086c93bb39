// Small text helpers the node checks share for sysfs attributes and tool outputs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::check {

inline constexpr int kMaxDscp = 63;     // DSCP is 6 bits (RFC 2474)
inline constexpr int kMaxPriority = 7;  // IEEE 802.1p priorities (PFC has one bit each): 0..7

// The whitespace-separated words of `text` (spaces, tabs, CR, LF).
std::vector<std::string_view> words(std::string_view text);
// The lines of `text`, without their '\n' (and a '\r' before it).
std::vector<std::string_view> lines(std::string_view text);
// A whole decimal integer ("16", "-1"), or nothing (empty, trailing junk, out of range).
std::optional<long> to_long(std::string_view text);
// A hexadecimal id as sysfs writes it ("0x15b3", "0x020000"), or nothing.
std::optional<unsigned long> to_hex(std::string_view text);
// The leading decimal number of `text` ("16.0 GT/s PCIe" -> 16, "400 Gb/sec (4X NDR)" -> 400).
std::optional<double> leading_number(std::string_view text);
// `text` starts with `prefix`, letter case ignored.
bool starts_with_nocase(std::string_view text, std::string_view prefix);

}  // namespace plumb::check

namespace plumb::check {

// The value after "KEY:" on the first line whose text before the colon is KEY (letter case and
// blanks around ignored): "link status: UP" -> "UP". Nothing when no line has it.
std::optional<std::string> keyed_value(std::string_view text, std::string_view key);

// The priorities a "PFC configuration" table enables, as both hccn_tool -pfc -g and mlnx_qos -i
// print it: a line "priority 0 1 2 3 4 5 6 7" and below it "enabled 0 0 0 1 0 0 0 0". Nothing when
// the table is missing or its rows do not line up.
std::optional<std::vector<int>> pfc_enabled_priorities(std::string_view text);

// "3,4" for {3, 4}; "none" when empty.
std::string priority_list(const std::vector<int>& priorities);

}  // namespace plumb::check
