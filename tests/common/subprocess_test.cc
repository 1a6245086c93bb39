#include "common/subprocess.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace plumb {
namespace {

// A process that exists and is not a zombie waiting for its parent to reap it.
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

TEST(Subprocess, OutputAndExitCode) {
  const auto r = run_with_timeout({"sh", "-c", "echo hello; exit 3"}, 10);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->output, "hello\n");
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(run_with_timeout({}, 1).has_value());
}

// A probe that hangs is killed at the limit with everything it started.
TEST(Subprocess, TimeoutKillsWhatTheProgramStarted) {
  const std::string pids = testing::TempDir() + "subprocess-pids-" + std::to_string(getpid());
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_with_timeout(
      {"sh", "-c", "sleep 100 & echo $! > " + pids + "; echo $$ >> " + pids + "; sleep 100"}, 0.5);
  EXPECT_FALSE(r.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  std::ifstream in(pids);
  pid_t background = 0;
  pid_t shell = 0;
  ASSERT_TRUE(in >> background >> shell);
  for (int i = 0; i < 100 && (running(background) || running(shell)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // init reaps the orphan
  }
  EXPECT_FALSE(running(background));
  EXPECT_FALSE(running(shell));
  std::filesystem::remove(pids);
}

// A program that closed its standard output but keeps running is still held to the limit.
TEST(Subprocess, ClosedOutputDoesNotEscapeTheLimit) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(run_with_timeout({"sh", "-c", "exec >/dev/null; sleep 100"}, 0.5).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace plumb
