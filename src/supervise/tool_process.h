// Running one recovery tool (nvidia-smi, npu-smi, hccn_tool, a site's --on-failure command) in a
// process group of its own, with text on its standard input, its standard output and error
// together, a deadline and plumb's stop flag: past either, the whole group is killed.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace plumb::supervise {

struct ToolResult {
  int exit_code = -1;       // 128 + signal when a signal ended it; 127 when it could not start
  std::string output;       // standard output and error as they came (the last 64 KiB)
  bool timed_out = false;   // the deadline came first: the group was killed
  bool stopped = false;     // *stop became true first: the group was killed
};

// Runs argv (argv[0] looked up in PATH). `input` is what the tool reads on its standard input
// (then end of file).
ToolResult run_tool(const std::vector<std::string>& argv, const std::string& input,
                    std::chrono::steady_clock::time_point deadline,
                    const std::atomic<bool>* stop);

// True when `name` is an executable file in one of PATH's folders.
bool found_in_path(const std::string& name);

}  // namespace plumb::supervise
