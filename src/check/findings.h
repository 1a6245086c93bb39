// What a check found wrong on a node, one line per device or port, folded into its single verdict:
// the worst status (critical > warning > unknown), every finding's value joined with "; " worst
// first, and the worst one's expected value and "check first" line.
#pragma once

#include <string>
#include <vector>

#include "check/check.h"

namespace plumb::check {

struct Finding {
  Status status = Status::kWarning;
  std::string value;     // "mlx5_0 (0000:3b:00.0) at x8, 16.0 GT/s PCIe"
  std::string expected;  // "x16, 16.0 GT/s PCIe"
  std::string detail;    // the one line to check first
};

// `healthy` when there are no findings.
CheckResult fold_findings(std::vector<Finding> findings, CheckResult healthy);

}  // namespace plumb::check
