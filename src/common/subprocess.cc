#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace plumb {
namespace {

// In the child: a process group of its own (so that a timeout ends what it started too), stdout
// to the pipe, stdin and stderr to /dev/null, then exec.
[[noreturn]] void exec_child(const std::vector<std::string>& argv, int out_fd) {
  setpgid(0, 0);
  const int null_fd = open("/dev/null", O_RDWR);
  dup2(null_fd, STDIN_FILENO);
  dup2(null_fd, STDERR_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  _exit(127);
}

using Clock = std::chrono::steady_clock;

// Appends what `fd` gives until its end; false when `deadline` came first.
bool read_until(int fd, Clock::time_point deadline, std::string& out) {
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) return true;
    out.append(buffer, static_cast<size_t>(n));
  }
}

// Waits for `pid` (which may outlive its output); false when `deadline` came first.
bool wait_until(pid_t pid, Clock::time_point deadline, int& status) {
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) return false;
    usleep(10'000);
  }
  return true;
}

}  // namespace

std::optional<ProcessResult> run_with_timeout(const std::vector<std::string>& argv,
                                              double timeout_seconds) {
  if (argv.empty()) return std::nullopt;
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) exec_child(argv, fds[1]);
  setpgid(pid, pid);  // also here: the group exists before any timeout can kill it
  close(fds[1]);
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_seconds * 1000));
  ProcessResult result;
  int status = 0;
  const bool finished = read_until(fds[0], deadline, result.output) && wait_until(pid, deadline, status);
  close(fds[0]);
  if (!finished) {
    kill(-pid, SIGKILL);  // the program and everything it started
    waitpid(pid, &status, 0);
    return std::nullopt;
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace plumb
