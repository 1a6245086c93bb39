// The supervisor's loop over real attempts of tiny shell jobs: what it says between them (the
// back-off, a log in no known format) and how it counts the steps lost after a restart.
#include "supervise/supervisor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "supervise/event_log.h"
#include "support/subprocess.h"

namespace plumb::supervise {
namespace {

struct Supervised {
  RunSummary summary;
  std::vector<nlohmann::json> events;
};

// Supervises `script` under sh with the default patterns, no back-off, its output sent to
// /dev/null instead of the test's stdout; the attempt is in $PLUMB_RESTART (empty, then 1, 2...).
Supervised supervise_script(const std::string& script,
                            int64_t unmatched_warning = kUnmatchedLinesWarning) {
  SuperviseOptions o;
  o.attempt.argv = {"sh", "-c", script};
  o.attempt.progress = default_progress_patterns();
  o.attempt.fatal = default_fatal_patterns();
  o.attempt.resume = default_resume_patterns();
  o.attempt.kill_grace_s = 1;
  o.backoff_s = 0;
  o.max_restarts = 2;
  o.unmatched_lines_warning = unmatched_warning;
  Supervised run;
  const int saved = ::dup(STDOUT_FILENO);
  const int null = ::open("/dev/null", O_WRONLY);
  ::dup2(null, STDOUT_FILENO);
  ::close(null);
  run.summary = supervise(o, [&](nlohmann::json e) { run.events.push_back(std::move(e)); });
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  return run;
}

std::vector<nlohmann::json> of_kind(const Supervised& run, const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : run.events) {
    if (e["event"] == kind) out.push_back(e);
  }
  return out;
}

// Megatron-style step lines FROM..TO.
std::string steps(int from, int to) {
  return "i=" + std::to_string(from) + "; while [ $i -le " + std::to_string(to) +
         " ]; do echo \" iteration $i/ 100 |\"; i=$((i+1)); done; ";
}

TEST(Supervisor, TheBackoffIsAnnouncedBeforeEachRestart) {
  const Supervised r = supervise_script("[ -n \"$PLUMB_RESTART\" ] || exit 3");
  ASSERT_EQ(r.summary.attempts, 2);
  const auto waits = of_kind(r, "backoff");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0]["attempt"], 2);
  EXPECT_EQ(waits[0]["seconds"], 0.0);
  std::vector<std::string> order;
  for (const nlohmann::json& e : r.events) order.push_back(e["event"]);
  EXPECT_EQ(order, (std::vector<std::string>{"start", "failure", "backoff", "restart", "start",
                                             "finished"}));
}

// No checkpoint plumb knows of: the job's first step after the restart (6) says it resumed after
// step 5, so 2 of its 7 steps are lost, not all 7.
TEST(Supervisor, StepsLostCountFromTheFirstStepAfterTheRestart) {
  const Supervised r = supervise_script("if [ -z \"$PLUMB_RESTART\" ]; then " + steps(1, 7) +
                                 "exit 3; fi; " + steps(6, 8));
  ASSERT_EQ(r.summary.recoveries.size(), 1u);
  const Recovery& rec = r.summary.recoveries[0];
  EXPECT_EQ(rec.last_step, 7);
  EXPECT_EQ(rec.first_step_after, 6);
  EXPECT_EQ(rec.steps_lost, 2);
}

// A job that logs every 4th step says where it resumed (Megatron-LM's line): 10 − 4 = 6 lost, not
// the 10 − (12 − 1) the first logged step would suggest.
TEST(Supervisor, StepsLostCountFromTheStepTheJobSaysItResumedFrom) {
  const Supervised r = supervise_script(
      "if [ -z \"$PLUMB_RESTART\" ]; then " + steps(10, 10) + "exit 3; fi; " +
      "echo '  successfully loaded checkpoint from /c [ t 1/1, p 1/1 ] at iteration 4'; " +
      steps(12, 12));
  ASSERT_EQ(r.summary.recoveries.size(), 1u);
  EXPECT_EQ(r.summary.recoveries[0].steps_lost, 6);
  const auto resumed = of_kind(r, "resumed");
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0]["attempt"], 2);
  EXPECT_EQ(resumed[0]["step"], 4);
}

// A job that went back past the step it resumed from never counts negative steps lost.
TEST(Supervisor, StepsLostAreNeverNegative) {
  const Supervised r = supervise_script("if [ -z \"$PLUMB_RESTART\" ]; then " + steps(3, 3) +
                                 "exit 3; fi; " + steps(9, 9));
  EXPECT_EQ(r.summary.recoveries.at(0).steps_lost, 0);
}

TEST(Supervisor, LinesInNoKnownFormatAreSaidOnceWithASample) {
  const Supervised r = supervise_script(
      "for i in 1 2 3 4 5 6 7; do echo \"Epoch 0 | step $i/12 | loss 2.31\"; done; echo; "
      "[ -n \"$PLUMB_RESTART\" ] || exit 3",
      5);
  const auto said = of_kind(r, "progress_unrecognised");
  ASSERT_EQ(said.size(), 1u) << "once in the run, not once per attempt";
  EXPECT_EQ(said[0]["lines"], 5);
  EXPECT_EQ(said[0]["sample"], "Epoch 0 | step 5/12 | loss 2.31");
}

TEST(Supervisor, NoWordOfUnknownLinesOnceAProgressLineWasSeen) {
  const Supervised r =
      supervise_script(steps(1, 1) + "for i in 1 2 3 4 5 6 7; do echo other; done", 5);
  EXPECT_TRUE(of_kind(r, "progress_unrecognised").empty());
}

// The events file: one line per event, the job's bytes made UTF-8; a device that takes nothing
// loses every event and says why.
TEST(EventLog, WritesOneLinePerEventAndReplacesBytesThatAreNotUtf8) {
  const std::string path = test::temp_dir("event-log") + "/events.jsonl";
  {
    EventLog log("--events", path);
    EXPECT_TRUE(log.write({{"event", "failure"}, {"detail", "NCCL error \xff\xfe"}}));
    EXPECT_TRUE(log.write({{"event", "finished"}}));
    EXPECT_EQ(log.written(), 2);
    EXPECT_EQ(log.lost(), 0);
  }
  EXPECT_EQ(test::read_file(path),
            "{\"detail\":\"NCCL error \xef\xbf\xbd\xef\xbf\xbd\",\"event\":\"failure\"}\n"
            "{\"event\":\"finished\"}\n");
}

TEST(EventLog, AFullDeviceLosesTheEventAndKeepsTheReason) {
  EventLog log("--events", "/dev/full");
  EXPECT_FALSE(log.write({{"event", "start"}}));
  EXPECT_FALSE(log.write({{"event", "finished"}}));
  EXPECT_EQ(log.written(), 0);
  EXPECT_EQ(log.lost(), 2);
  EXPECT_EQ(log.first_error(), ENOSPC);
}

TEST(EventLog, APathThatCannotBeOpenedIsOneError) {
  EXPECT_EQ(test::error_message([] { EventLog("--events", "/nonexistent/dir/e.jsonl"); }),
            "--events /nonexistent/dir/e.jsonl: cannot be written: No such file or directory");
}

}  // namespace
}  // namespace plumb::supervise
