// A long-running program under test (plumb exporter, Prometheus, Alertmanager, a relay): started
// in a process group of its own with its output in a log file, stopped with SIGTERM (SIGKILL
// after a grace period) when the test ends, so that no test leaves a server behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

namespace plumb::test {

class Service {
 public:
  // Runs `command` with /bin/sh (exec'd, so the shell is the program); output to `log_path`.
  Service(const std::string& name, const std::string& command, const std::string& log_path);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  std::string log() const;
  bool running();
  // SIGTERM to the group, then SIGKILL after `grace`; the exit status as a shell shows it
  // (128 + signal for a signal); -1 when it had already been reaped.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

 private:
  std::string name_;
  std::string log_path_;
  pid_t pid_ = -1;
  int status_ = -1;
  bool reaped_ = false;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
int free_port();

// GET (or POST with `body`) through curl: the body, or "" on failure; `status` gets the HTTP code.
std::string http(const std::string& url, int* status = nullptr, const std::string& body = "");

// Polls `url`/metrics every 50 ms until it answers 200 (a server just started); false after 10 s.
bool wait_until_serving(const std::string& url);

}  // namespace plumb::test
