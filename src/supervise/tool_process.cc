#include "supervise/tool_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/strings.h"

namespace plumb::supervise {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kKeptOutput = 64 * 1024;     // the tail of a tool's output kept
constexpr int kPollMs = 20;                   // how often the deadline and stop are looked at

// The tool's standard input: a memory file holding `input` (no pipe: a tool that exits without
// reading it cannot hurt plumb with SIGPIPE).
int input_file(const std::string& input) {
  const int fd = memfd_create("plumb-tool-input", MFD_CLOEXEC);
  if (fd < 0) return open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (!input.empty() && write(fd, input.data(), input.size()) < 0) return fd;
  lseek(fd, 0, SEEK_SET);
  return fd;
}

[[noreturn]] void exec_child(const std::vector<std::string>& argv, int in_fd, int out_fd) {
  setpgid(0, 0);
  dup2(in_fd, STDIN_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  dup2(out_fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  _exit(127);
}

bool interrupted(Clock::time_point deadline, const std::atomic<bool>* stop, ToolResult& result) {
  if (stop && stop->load()) result.stopped = true;
  else if (Clock::now() >= deadline) result.timed_out = true;
  return result.stopped || result.timed_out;
}

void keep(std::string& output, const char* data, size_t size) {
  output.append(data, size);
  if (output.size() > 2 * kKeptOutput) output.erase(0, output.size() - kKeptOutput);
}

// Reads what the tool prints until it exits (a daemon it started may keep the output open) or an
// interruption, which kills the whole group.
void watch(pid_t pid, int fd, Clock::time_point deadline, const std::atomic<bool>* stop,
           ToolResult& result) {
  char buffer[4096];
  bool open_output = true;
  int status = 0;
  while (!interrupted(deadline, stop, result)) {
    pollfd p{fd, POLLIN, 0};
    if (open_output && poll(&p, 1, kPollMs) > 0) {
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n > 0) keep(result.output, buffer, static_cast<size_t>(n));
      else open_output = false;
      continue;
    }
    if (!open_output) usleep(kPollMs * 1000);
    if (waitpid(pid, &status, WNOHANG) != pid) continue;
    for (ssize_t n = 1; open_output && poll(&p, 1, 0) > 0 && n > 0;) {
      n = read(fd, buffer, sizeof buffer);
      if (n > 0) keep(result.output, buffer, static_cast<size_t>(n));
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return;
  }
  kill(-pid, SIGKILL);  // the tool and everything it started
  waitpid(pid, &status, 0);
  result.exit_code = 128 + SIGKILL;
}

}  // namespace

ToolResult run_tool(const std::vector<std::string>& argv, const std::string& input,
                    Clock::time_point deadline, const std::atomic<bool>* stop) {
  ToolResult result;
  int fds[2];
  if (argv.empty() || pipe2(fds, O_CLOEXEC) != 0) return result;
  const int in_fd = input_file(input);
  const pid_t pid = fork();
  if (pid == 0) exec_child(argv, in_fd, fds[1]);
  close(in_fd);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return result;
  }
  setpgid(pid, pid);  // also here: the group exists before a deadline can kill it
  watch(pid, fds[0], deadline, stop, result);
  close(fds[0]);
  if (result.output.size() > kKeptOutput) result.output.erase(0, result.output.size() - kKeptOutput);
  return result;
}

bool found_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  for (const std::string& dir : split_list(path, ':')) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) {
      return true;
    }
  }
  return false;
}

}  // namespace plumb::supervise
