// plumb serve mock, the real binary: serving on a port it picked, a stream and its truth log,
// SIGTERM, and its option errors.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/service.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

using Clock = std::chrono::steady_clock;
const std::string kPlumb = PLUMB_BIN;

// `plumb serve mock ARGS` in the background with its stderr on a pipe.
struct Mock {
  pid_t pid = -1;
  int err = -1;

  explicit Mock(const std::vector<std::string>& args) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      std::vector<char*> argv = {const_cast<char*>(kPlumb.c_str()), const_cast<char*>("serve"),
                                 const_cast<char*>("mock")};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(kPlumb.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    err = fds[0];
  }
  ~Mock() {
    if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    ::close(err);
  }
  std::string first_line() {
    std::string line;
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
    while (line.find('\n') == std::string::npos && Clock::now() < deadline) {
      pollfd p{err, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(err, buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    return line;
  }
  int wait_exit(double seconds) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
};

TEST(ServeMockCli, StreamsOnAPortItPickedLogsTheTruthAndStopsOnSigterm) {
  const std::string log = temp_dir("serve_mock_cli") + "/truth.jsonl";
  Mock mock({"--port", "0", "--tokens", "2", "--itl", "1ms", "--log", log});
  const std::string line = mock.first_line();
  const std::string prefix = "plumb serve mock: serving http://127.0.0.1:";
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
  const std::size_t start = line.find("http://");
  const std::string base = line.substr(start, line.find(' ', start) - start);
  int status = 0;
  const std::string body = http(base + "/v1/completions", &status,
                                R"({"model":"m","prompt":"hi","stream":true})");
  EXPECT_EQ(status, 200);
  EXPECT_NE(body.find(R"("text":" tok","logprobs":null,"finish_reason":"length")"), std::string::npos);
  EXPECT_TRUE(body.ends_with("data: [DONE]\n\n")) << body;
  ::kill(mock.pid, SIGTERM);
  EXPECT_EQ(mock.wait_exit(10), 0);
  const std::string truth = read_file(log);
  EXPECT_NE(truth.find(R"("outcome":"completed")"), std::string::npos) << truth;
  EXPECT_NE(truth.find(R"("prompt_head":"hi")"), std::string::npos) << truth;
}

TEST(ServeMockCli, BadOptionsAreOneLineAndExit2) {
  plumb::test::Run run = run_command(kPlumb + " serve mock --ttft fast");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "plumb: error: --ttft 'fast': expected a duration such as 50ms, 200us or 1.5s\n");
  run = run_command(kPlumb + " serve mock --error 500:9-3");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "plumb: error: --error '500:9-3': the range ends before it starts\n");
  run = run_command(kPlumb + " serve mock --plan stall=x");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "plumb: error: --plan stall 'x': expected K:DURATION (stall after K tokens)\n");
}

}  // namespace
}  // namespace plumb::test
