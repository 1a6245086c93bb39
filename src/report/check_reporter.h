// plumb check node's outputs: the console table, plumb.check/1 JSON (and read back, for the
// store and `plumb check` history), and a node_exporter textfile so Prometheus sees the same
// verdicts (docs/check.md, "Outputs").
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string_view>

#include "baseline/store.h"
#include "check/node_run.h"

namespace plumb::report {

// One line per check that ran (status, name, value, expected, check first), the skipped ones in
// one line, and the verdict last: "node7: critical: pcie.link: mlx5_0 at x8 (expected x16)".
void print_check_console(const check::NodeReport& report, std::ostream& out);

// The verdict line alone, as the monitoring plugins print it first:
// "CHECK CRITICAL - node7: pcie.link: mlx5_0 at x8 (expected x16)", "CHECK OK - node7: 14 checks".
std::string check_summary_line(const check::NodeReport& report);

nlohmann::json check_json(const check::NodeReport& report);
// plumb.check/1 back; a field of the wrong kind is a plumb::Error naming `source` and its path.
check::NodeReport check_from_json(const nlohmann::json& doc, std::string_view source);

// The node_exporter textfile collector's format: plumb_check_status{check,category} per check
// (0 ok, 1 warning, 2 critical, 3 unknown), plumb_check_node_status, the pass's duration and time.
void write_check_textfile(const check::NodeReport& report, std::ostream& out);

// plumb list's section of stored check passes, newest first:
//   "CHECK  CREATED               HOST    KIND     STATUS    FAILING"
void print_check_list(const std::vector<baseline::CheckEntry>& entries, std::ostream& out);

}  // namespace plumb::report
