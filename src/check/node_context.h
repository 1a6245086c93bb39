// What a node check reads: files under a root (sysfs, procfs, /etc; `--root DIR` points every probe
// at a copy of another node's tree) and tools on PATH (nvidia-smi, npu-smi, hccn_tool, mlnx_qos,
// ...), each run with a deadline. Probes never name "/sys" or "/proc" without going through here,
// so the tests run every check against a tree and stand-in tools of their own.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::check {

// How one tool run ended.
struct ToolRun {
  enum class State { kDone, kNotFound, kTimedOut, kFailedToStart };
  State state = State::kNotFound;
  int exit_code = -1;   // kDone: the tool's exit status
  std::string output;   // kDone: its standard output (standard error is dropped)
  std::string tool;     // argv[0]
  double timeout_s = 0;

  bool ok() const { return state == State::kDone && exit_code == 0; }
  // Why it gave nothing usable, for a check's "unknown": "nvidia-smi: not found on PATH",
  // "nvidia-smi: no answer within 5 s (stopped)", "nvidia-smi: exit status 9".
  std::string problem() const;
};

struct NodeContext {
  std::string root = "/";
  double tool_timeout_s = 5.0;                   // each tool run
  std::map<std::string, std::string> environment;  // the variables the checks judge (NCCL_*, ...)
  std::string checkpoint_dir;                    // free space is checked here when set
  std::string host;                              // the node's name, for messages and records

  // ROOT + `absolute` ("/sys/class/net" under root "/tmp/node7" is "/tmp/node7/sys/class/net").
  std::string path(std::string_view absolute) const;
  // The text of ROOT + `absolute` (at most 16 MiB), or nothing when it is missing or unreadable.
  // sysfs attributes keep their trailing newline; use trimmed() for one value.
  std::optional<std::string> read(std::string_view absolute) const;
  // The first line of read(), without surrounding blanks.
  std::optional<std::string> read_value(std::string_view absolute) const;
  // The names in the folder ROOT + `absolute`, sorted, without "." and ".."; empty when missing.
  std::vector<std::string> list(std::string_view absolute) const;
  // Where the symbolic link ROOT + `absolute` points (as written), or nothing.
  std::optional<std::string> link(std::string_view absolute) const;
  // Runs argv[0] from PATH with tool_timeout_s; never throws.
  ToolRun tool(const std::vector<std::string>& argv) const;
};

// The file system's free bytes and size at `path` (statvfs), or nothing.
struct FreeSpace {
  double free_bytes = 0;
  double total_bytes = 0;
};
std::optional<FreeSpace> free_space(const std::string& path);

}  // namespace plumb::check
