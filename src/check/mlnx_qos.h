// `mlnx_qos -i <interface>` (MLNX_OFED / mlnx-tools, python/mlnx_qos) as net.roce reads it:
//
//   DCBX mode: OS controlled
//   Priority trust state: dscp
//   dscp2prio mapping:
//           prio:0 dscp:07,06,05,04,03,02,01,00,
//           ...
//   PFC configuration:
//           priority    0   1   2   3   4   5   6   7
//           enabled     0   0   0   1   0   0   0   0
//
// Sources of the layout: tests/fixtures/check/mlnx_qos/SOURCES.md. Never throws.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::check {

struct MlnxQos {
  std::string trust;                 // "dscp", "pcp" ("" when the line is missing)
  std::optional<std::vector<int>> pfc_priorities;  // PFC-enabled priorities
  std::map<int, int> dscp_to_prio;   // from "dscp2prio mapping" (trust dscp only)
};

// Nothing when neither the trust line nor the PFC table is there (not mlnx_qos output).
std::optional<MlnxQos> parse_mlnx_qos(std::string_view text);

}  // namespace plumb::check
