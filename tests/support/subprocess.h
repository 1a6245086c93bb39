// Runs a shell command for end-to-end tests and captures what it printed and how it exited.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace plumb::test {

struct Run {
  int exit_code = -1;
  std::string out;  // standard output
  std::string err;  // standard error
};

// Runs `command` with /bin/sh; stdout and stderr are captured separately.
Run run_command(const std::string& command);

// A fresh empty directory under the build tree's temporary folder.
// Waits for the child `pid` and returns its wait status, waiting again when a signal interrupted
// the wait (a SIGCHLD handler an earlier test of the same binary installed without SA_RESTART,
// as plumb run's supervisor does, makes a bare waitpid return early with EINTR and no status).
int wait_status(pid_t pid);

std::string temp_dir(const std::string& name);

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);

// The message of the plumb::Error `fn` throws, or "(no error)".
std::string error_message(const std::function<void()>& fn);

// "mpirun --allow-run-as-root --oversubscribe -np N" (root in CI; 2 cores for up to 8 ranks).
std::string mpirun(int ranks);

}  // namespace plumb::test
