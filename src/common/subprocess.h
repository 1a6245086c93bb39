// Running a helper program with a time limit (python3 for framework versions, ...).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace plumb {

struct ProcessResult {
  int exit_code = -1;
  std::string output;  // standard output (standard error is discarded)
};

// Runs argv[0] (looked up in PATH) with `argv`, no shell, in a process group of its own. Returns
// nothing when it cannot start or does not finish within `timeout_seconds` (its whole process
// group, what it started included, is then killed).
std::optional<ProcessResult> run_with_timeout(const std::vector<std::string>& argv,
                                              double timeout_seconds);

}  // namespace plumb
