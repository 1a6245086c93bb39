#include "support/service.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "support/subprocess.h"

namespace plumb::test {

Service::Service(const std::string& name, const std::string& command, const std::string& log_path)
    : name_(name), log_path_(log_path) {
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed for " + name);
  if (pid_ == 0) {
    setpgid(0, 0);
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    const std::string exec_command = "exec " + command;
    execl("/bin/sh", "sh", "-c", exec_command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid_, pid_);
}

Service::~Service() { stop(); }

std::string Service::log() const { return read_file(log_path_); }

bool Service::running() {
  if (reaped_) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

int Service::stop(std::chrono::milliseconds grace) {
  if (!running()) {
    if (status_ == -1) return -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (running()) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    reaped_ = true;
  }
  kill(-pid_, SIGKILL);  // anything the program left in its group
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    throw std::runtime_error("no free port");
  }
  close(fd);
  return ntohs(address.sin_port);
}

std::string http(const std::string& url, int* status, const std::string& body) {
  static int calls = 0;
  const std::string dir = temp_dir("http-client" + std::to_string(calls++));
  const std::string out = dir + "/body";
  std::string command = "curl -s -m 10 -o " + out + " -w '%{http_code}' ";
  if (!body.empty()) {
    write_file(dir + "/request", body);
    command += "-H 'Content-Type: application/json' --data-binary @" + dir + "/request ";
  }
  const Run r = run_command(command + "'" + url + "'");
  if (status) *status = r.out.empty() ? 0 : std::stoi(r.out);
  return r.exit_code == 0 ? read_file(out) : "";
}

bool wait_until_serving(const std::string& url) {
  for (int i = 0; i < 200; ++i) {
    int status = 0;
    http(url + "/metrics", &status);
    if (status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace plumb::test
