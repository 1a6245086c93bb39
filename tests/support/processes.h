// Finding the processes a test started (through mpirun, plumb baseline, ...) by a word of their
// command lines, to signal them or to assert that none is left.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace plumb::test {

struct Process {
  pid_t pid = 0;
  std::vector<std::string> argv;  // its command line
};

// Live processes (not zombies) other than this one whose command line contains `marker`.
std::vector<Process> processes_with(const std::string& marker);

// Its environment variable `name`, or "" (the process's /proc/PID/environ).
std::string environment_of(pid_t pid, const std::string& name);

// The names of its threads (/proc/PID/task/*/comm).
std::vector<std::string> thread_names(pid_t pid);

// Calls `done` every 50 ms until it returns true or `limit` passed; returns its last answer.
bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit);

}  // namespace plumb::test
