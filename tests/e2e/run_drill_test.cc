// plumb run --drill K end to end: K faults injected into the stand-in trainer (SIGKILL, SIGSTOP),
// each recovered from, and the recovery baseline reported (issue 12, point 6).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "support/processes.h"
#include "support/run_supervised.h"

namespace plumb::test {
namespace {

// A trainer that saves a Megatron checkpoint every 4 steps, 50 ms a step.
std::string trainer(const std::string& ckpt) {
  return "--steps 40 --save-every 4 --step-seconds 0.05 --ckpt " + ckpt;
}

TEST(RunDrill, KFaultsGiveKRecoveriesEachResumedRightAfterItsCheckpoint) {
  const std::string ckpt = temp_dir("drill-ckpt");
  const Supervised s = supervise("drill", "--drill 2 --hang-timeout 1 --checkpoint-dir " + ckpt,
                                 trainer(ckpt));
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  const auto failures = of_kind(s.events, "failure");
  ASSERT_EQ(failures.size(), 2u) << s.run.err;
  EXPECT_EQ(failures[0]["injected"], "kill");
  EXPECT_EQ(failures[0]["kind"], "signal");
  EXPECT_EQ(failures[0]["detail"], "signal 9 (Killed)");
  EXPECT_EQ(failures[1]["injected"], "hang");
  EXPECT_EQ(failures[1]["kind"], "hang");
  // A kill is seen at once; a SIGSTOP within the hang timeout (1 s) of the last step, + 0.5 s.
  EXPECT_LT(failures[0]["detect_seconds"].get<double>(), 0.5);
  EXPECT_LT(failures[1]["detect_seconds"].get<double>(), 1.5);
  EXPECT_EQ(of_kind(s.events, "finished").size(), 1u);
  // Each fault came after a checkpoint the restart then resumed from.
  const auto checkpoints = of_kind(s.events, "checkpoint");
  ASSERT_EQ(checkpoints.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const int64_t resumed = checkpoints[i]["step"].get<int64_t>();
    EXPECT_GT(resumed, 0);
    EXPECT_EQ(resumed % 4, 0);
    EXPECT_GE(failures[i]["step"].get<int64_t>(), resumed) << "equal: the save raced the fault";
    EXPECT_LE(failures[i]["step"].get<int64_t>(), resumed + 4 + 3) << "1..3 lines after a save";
    EXPECT_NE(s.run.out.find("attempt " + std::to_string(i + 1) + " starting at step " +
                             std::to_string(resumed + 1)),
              std::string::npos)
        << s.run.out;
  }
  EXPECT_NE(s.run.err.find("recovery baseline: 3 attempts, 2 failures (2 injected by the drill), "
                           "finished\n"),
            std::string::npos)
      << s.run.err;
  EXPECT_NE(s.run.err.find(" ok "), std::string::npos) << s.run.err;
  EXPECT_NE(s.run.err.find("\nmedian: detect "), std::string::npos) << s.run.err;
  EXPECT_TRUE(left_behind("drill", "fake_trainer.py").empty());
}

TEST(RunDrill, AJobThatFinishesBeforeEveryFaultFailsTheDrill) {
  const std::string ckpt = temp_dir("drill-short-ckpt");
  const Supervised s = supervise("drill-short", "--drill 9 --drill-faults kill --checkpoint-dir " +
                                                    ckpt,
                                 "--steps 12 --save-every 4 --step-seconds 0.05 --ckpt " + ckpt);
  EXPECT_EQ(s.run.exit_code, 1) << s.run.err;
  const size_t injected = of_kind(s.events, "failure").size();
  EXPECT_LT(injected, 3u) << "a fault only after a new checkpoint: at most after 4 and 8";
  EXPECT_NE(s.run.err.find("plumb run: drill: only " + std::to_string(injected) +
                           " of 9 faults were injected: the job finished first\n"),
            std::string::npos)
      << s.run.err;
}

TEST(RunDrill, AnUnknownFaultIsOneLine) {
  const test::Run r = run_command(kPlumb + " run --drill 1 --drill-faults kill,oom -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --drill-faults 'kill,oom': unknown fault 'oom' (known: kill, "
                   "hang)\n");
}

TEST(RunDrill, AHangDrillWithoutAHangTimeoutIsOneLine) {
  const test::Run r = run_command(kPlumb + " run --drill 1 --hang-timeout 0 -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --drill-faults hang needs a --hang-timeout above 0 to detect the "
                   "hang\n");
}

}  // namespace
}  // namespace plumb::test
