// SIGTERM and SIGINT to `plumb run` (issue 12, point 4): the job is stopped cleanly, the stop is
// not counted as a failure, plumb exits 130, and no process of the job is left, a grandchild in
// a session of its own and a trainer that ignores SIGTERM included.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/processes.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;
const std::string kTrainer =
    "python3 " + std::string(PLUMB_TEST_FIXTURES) + "/run/fake_trainer.py";

std::vector<nlohmann::json> events_of(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

bool is_plumb(const Process& p) {
  return !p.argv.empty() && std::filesystem::path(p.argv[0]).filename() == "plumb";
}

struct Stopped {
  test::Run run;
  std::vector<nlohmann::json> events;
  size_t running_before = 0;  // processes carrying the tag when the signal was sent
  double seconds = 0;         // from the signal to plumb's exit
  std::vector<Process> left;  // processes carrying the tag after plumb's exit
};

// Starts `plumb run` over a trainer of 1000 slow steps; once the events file shows progress,
// sends `signal` to plumb alone (as Kubernetes or Slurm would) and waits for it to exit.
// `tag`, unique to the test, is in plumb's and the trainer's command lines (and the
// grandchild's, when `grandchild`), so that other tests' processes are not counted.
Stopped stop_plumb(const std::string& name, int signal, const std::string& plumb_options,
                   const std::string& trainer_options, bool grandchild) {
  const std::string dir = temp_dir(name);
  const std::string tag = dir + "/tag";
  const std::string events = dir + "/events.jsonl";
  Stopped s;
  std::thread runner([&] {
    // --ckpt without --save-every saves nothing: it carries the tag.
    s.run = run_command("exec " + kPlumb + " run --backoff 0.1 --events " + events + " " +
                        plumb_options + " -- " + kTrainer + " --steps 1000 --step-seconds 0.05 " +
                        "--ckpt " + tag + " " + trainer_options +
                        (grandchild ? " --grandchild-tag " + tag : ""));
  });
  const bool progressed = wait_for(
      [&] { return read_file(events).find("\"event\":\"progress\"") != std::string::npos; },
      std::chrono::seconds(60));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the grandchild started
  const std::vector<Process> running = processes_with(tag);
  s.running_before = running.size();
  const auto sent = std::chrono::steady_clock::now();
  for (const Process& p : running) {
    if (is_plumb(p)) kill(p.pid, signal);
  }
  runner.join();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  s.left = processes_with(tag);
  for (const Process& p : s.left) kill(p.pid, SIGKILL);  // not to disturb other tests
  s.events = events_of(events);
  EXPECT_TRUE(progressed) << "no progress event in 60 s";
  return s;
}

void expect_stopped_cleanly(const Stopped& s) {
  EXPECT_EQ(s.run.exit_code, 130) << s.run.err;
  EXPECT_NE(s.run.err.find("plumb run: stopped by a signal; the job was stopped\n"),
            std::string::npos)
      << s.run.err;
  ASSERT_FALSE(s.events.empty());
  EXPECT_EQ(s.events.back()["event"], "stopped");
  for (const nlohmann::json& e : s.events) {
    EXPECT_NE(e["event"], "failure") << e;
    EXPECT_NE(e["event"], "restart") << e;
  }
  EXPECT_TRUE(s.left.empty()) << s.left.size() << " process(es) left, the first "
                              << (s.left.empty() ? "" : s.left[0].argv[0]);
}

TEST(RunSignal, SigtermStopsTheJobAndItsGrandchild) {
  const Stopped s = stop_plumb("run-sigterm", SIGTERM, "--kill-grace 5",
                               "", /*grandchild=*/true);
  EXPECT_EQ(s.running_before, 3u) << "plumb, the trainer and its grandchild";
  expect_stopped_cleanly(s);
}

TEST(RunSignal, SigintStopsTheJobAndItsGrandchild) {
  const Stopped s = stop_plumb("run-sigint", SIGINT, "--kill-grace 5",
                               "", /*grandchild=*/true);
  EXPECT_EQ(s.running_before, 3u) << "plumb, the trainer and its grandchild";
  expect_stopped_cleanly(s);
}

// The trainer survives SIGTERM: SIGKILL after --kill-grace ends it.
TEST(RunSignal, AJobThatIgnoresSigtermIsKilledAfterTheGrace) {
  const Stopped s = stop_plumb("run-ignore-term", SIGTERM, "--kill-grace 1", "--ignore-sigterm",
                               /*grandchild=*/false);
  EXPECT_EQ(s.running_before, 2u) << "plumb and the trainer";
  expect_stopped_cleanly(s);
  EXPECT_GE(s.seconds, 1.0);
  EXPECT_LT(s.seconds, 1.0 + 3.0);
}

// DISABLED until attempt.cc's stop_tree signals the processes handed to plumb while it stops
// the tree (branch issue12-seal's report has the fix). The trainer dies and its grandchild, in a
// session of its own, is handed to plumb only after stop_tree listed plumb's children: it gets
// no SIGTERM, and the stop lasts the whole --kill-grace (about one run in two, a race).
TEST(RunSignal, AnOrphanHandedOverDuringTheStopGetsSigterm) {
  for (int i = 0; i < 3; ++i) {
    const Stopped s = stop_plumb("run-orphan-term", SIGTERM, "--kill-grace 5", "",
                                 /*grandchild=*/true);
    expect_stopped_cleanly(s);
    EXPECT_LT(s.seconds, 3.0) << "try " << i;
  }
}

// DISABLED for the same bug: the trainer ignores SIGTERM; SIGKILL ends it and its grandchild is
// handed to plumb after the SIGKILL went out, so nothing signals it, and plumb's blocking
// waitpid(-1) waits for it to end by itself (300 s).
TEST(RunSignal, AnOrphanHandedOverAfterTheSigkillIsKilledToo) {
  for (int i = 0; i < 3; ++i) {
    const Stopped s = stop_plumb("run-orphan-kill", SIGTERM, "--kill-grace 1", "--ignore-sigterm",
                                 /*grandchild=*/true);
    expect_stopped_cleanly(s);
    EXPECT_LT(s.seconds, 1.0 + 3.0) << "try " << i;
  }
}

}  // namespace
}  // namespace plumb::test
