// Runs the table of node checks: every check on a thread of its own, so that the pass takes as
// long as its slowest check, and none longer than its deadline (a check stuck in a hung tool or
// file system is "unknown", the pass goes on).
#pragma once

#include <string>
#include <vector>

#include "check/check.h"
#include "check/check_file.h"

namespace plumb::check {

inline constexpr const char* kCheckSchema = "plumb.check/1";

struct NodeReport {
  std::string command = "node";  // the plumb check subcommand that made it: node or burn-in
  std::string host;
  std::string created;  // ISO 8601, UTC
  std::string root;
  std::string check_file;
  std::string sku;
  double seconds = 0;  // the whole pass, wall clock
  std::vector<CheckResult> checks;  // table order; skipped ones included, flagged

  // The worst status of the checks that ran (worse()); ok when none ran.
  Status status() const;
  // The checks that gave the worst status, in table order (empty when ok).
  std::vector<const CheckResult*> worst() const;
};

struct NodeRunOptions {
  std::vector<std::string> only;  // names or categories ("host", "pcie.link"); empty: all
  std::vector<std::string> skip;  // names or categories left out
  // A check still running this long after the pass began is reported unknown. Default: the tool
  // timeout plus a margin for the files it reads.
  double deadline_s = 0;
};

// Every selected check against `file`. Problems with the check file's values (a threshold that is
// not a number) are gathered from all checks and thrown as one plumb::Error.
NodeReport run_node_checks(const NodeContext& context, const CheckFile& file,
                           const NodeRunOptions& options);
// The same over another table (tests: checks that hang or fail on purpose). `table` must outlive
// the process's detached threads: a static or leaked table.
NodeReport run_node_checks(const NodeContext& context, const CheckFile& file,
                           const NodeRunOptions& options, std::span<const CheckSpec> table);

// The names of `--only`/`--skip` checked against the table: plumb::Error "--only 'hots': no check
// or category of that name (did you mean 'host'?)".
void check_selection(const std::vector<std::string>& names, std::string_view option);

}  // namespace plumb::check
