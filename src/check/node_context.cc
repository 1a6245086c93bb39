#include "check/node_context.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "common/strings.h"
#include "common/subprocess.h"

namespace plumb::check {
namespace {

// procfs files of a large node (/proc/interrupts with thousands of vectors) stay far below this;
// a file over it is cut, never read whole into memory.
constexpr size_t kMaxProbeFileBytes = size_t{16} << 20;

// argv[0] as execvp would find it: a name with a slash as it is, else the first executable match
// in PATH.
bool on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  for (const std::string& dir : split_list(path, ':')) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return true;
    }
  }
  return false;
}

std::string seconds_text(double seconds) { return fmt::format("{:g} s", seconds); }

// execvp's failure in the child of run_with_timeout.
constexpr int kExecFailed = 127;

}  // namespace

std::string ToolRun::problem() const {
  switch (state) {
    case State::kNotFound:
      return fmt::format("{}: not found on PATH", tool);
    case State::kTimedOut:
      return fmt::format("{}: no answer within {} (stopped)", tool, seconds_text(timeout_s));
    case State::kFailedToStart:
      return fmt::format("{}: could not be started", tool);
    case State::kDone:
      break;
  }
  return exit_code == 0 ? std::string() : fmt::format("{}: exit status {}", tool, exit_code);
}

std::string NodeContext::path(std::string_view absolute) const {
  if (root.empty() || root == "/") return std::string(absolute);
  std::string base = root;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (!absolute.empty() && absolute.front() != '/') base += '/';
  return base + std::string(absolute);
}

std::optional<std::string> NodeContext::read(std::string_view absolute) const {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path(absolute).c_str(), "rb"), &std::fclose);
  if (!file) return std::nullopt;
  std::string text;
  char buffer[8192];
  while (text.size() < kMaxProbeFileBytes) {
    const size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    if (n == 0) break;
    text.append(buffer, n);
  }
  if (std::ferror(file.get()) && text.empty()) return std::nullopt;
  return text;
}

std::optional<std::string> NodeContext::read_value(std::string_view absolute) const {
  const std::optional<std::string> text = read(absolute);
  if (!text) return std::nullopt;
  const std::string_view whole = *text;
  return std::string(trim_blanks(whole.substr(0, whole.find('\n'))));
}

std::vector<std::string> NodeContext::list(std::string_view absolute) const {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path(absolute).c_str());
  if (dir == nullptr) return names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> NodeContext::link(std::string_view absolute) const {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::read_symlink(path(absolute), ec);
  if (ec) return std::nullopt;
  return target.string();
}

ToolRun NodeContext::tool(const std::vector<std::string>& argv) const {
  ToolRun run;
  run.tool = argv.empty() ? std::string() : argv.front();
  run.timeout_s = tool_timeout_s;
  if (argv.empty() || !on_path(argv.front())) return run;
  const std::optional<ProcessResult> result = run_with_timeout(argv, tool_timeout_s);
  if (!result) {
    run.state = ToolRun::State::kTimedOut;
    return run;
  }
  run.state = result->exit_code == kExecFailed && result->output.empty()
                  ? ToolRun::State::kFailedToStart
                  : ToolRun::State::kDone;
  run.exit_code = result->exit_code;
  run.output = result->output;
  return run;
}

std::optional<FreeSpace> free_space(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return std::nullopt;
  const double unit = static_cast<double>(st.f_frsize);
  return FreeSpace{static_cast<double>(st.f_bavail) * unit, static_cast<double>(st.f_blocks) * unit};
}

}  // namespace plumb::check
