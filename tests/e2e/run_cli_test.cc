// plumb run end to end: the real binary supervising a stand-in trainer
// (tests/fixtures/run/fake_trainer.py) that logs Megatron-style steps and crashes, hangs or
// prints a fatal NCCL line when told; what it must show (issue 12) checked from the exit status,
// the plumb.run-events/1 file and the process table.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "support/processes.h"
#include "support/run_supervised.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {


TEST(RunCli, ACrashIsRestartedAndTheRunFinishes) {
  const Supervised s = supervise("run-crash", "", "--steps 6 --crash-at 3");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  const auto failures = of_kind(s.events, "failure");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]["kind"], "exit");
  EXPECT_EQ(failures[0]["detail"], "exit 3");
  EXPECT_EQ(failures[0]["step"], 3);
  EXPECT_EQ(of_kind(s.events, "restart").size(), 1u);
  EXPECT_EQ(of_kind(s.events, "finished").size(), 1u);
  EXPECT_NE(s.run.out.find("training done"), std::string::npos);  // output passed through
  EXPECT_NE(s.run.err.find("plumb run: attempt 1 failed: exit (exit 3), last step 3\n"),
            std::string::npos)
      << s.run.err;
}

TEST(RunCli, AHangIsDetectedWithinTheTimeoutPlusTwoSeconds) {
  const Supervised s = supervise("run-hang", "--hang-timeout 1", "--steps 4 --hang-at 2");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  const auto failures = of_kind(s.events, "failure");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]["kind"], "hang");
  EXPECT_EQ(failures[0]["step"], 2);
  EXPECT_LT(failures[0]["detect_seconds"].get<double>(), 1 + 2.0) << "the quiet time";
  EXPECT_LT(s.seconds, 1 + 2 + 5) << "the hang of 3600 s was waited out";
}

TEST(RunCli, AFatalLineEndsTheAttemptAtOnceAndNothingIsLeft) {
  const Supervised s = supervise("run-fatal", "--max-restarts 0",
                                 "--steps 4 --fatal-at 2 --child");
  EXPECT_EQ(s.run.exit_code, 1) << s.run.err;
  const auto failures = of_kind(s.events, "failure");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]["kind"], "fatal_line");
  EXPECT_EQ(failures[0]["detail"],
            "NCCL WARN Call to ibv_poll_cq failed: transport retry counter exceeded");
  EXPECT_EQ(of_kind(s.events, "give_up").size(), 1u);
  EXPECT_LT(s.seconds, 5);
  // The trainer's grandchild left its process group (a new session); plumb, its subreaper,
  // stopped it too.
  EXPECT_TRUE(left_behind("run-fatal", "fake_trainer.py").empty());
  EXPECT_TRUE(left_behind("run-fatal", "sleep 300").empty());
}

TEST(RunCli, MoreFaultsThanRestartsGiveUp) {
  const Supervised s = supervise("run-give-up", "--max-restarts 2",
                                 "--steps 5 --crash-at 1 --fault-attempts all");
  EXPECT_EQ(s.run.exit_code, 1);
  EXPECT_EQ(of_kind(s.events, "failure").size(), 3u);
  EXPECT_EQ(of_kind(s.events, "restart").size(), 2u);
  ASSERT_EQ(of_kind(s.events, "give_up").size(), 1u);
  EXPECT_NE(s.run.err.find("plumb run: giving up"), std::string::npos);
}

TEST(RunCli, KFaultsGiveKRecoveries) {
  const Supervised s = supervise("run-k-faults", "",
                                 "--steps 4 --crash-at 2 --fault-attempts 0,1,2");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  EXPECT_EQ(of_kind(s.events, "failure").size(), 3u);
  EXPECT_EQ(of_kind(s.events, "restart").size(), 3u);
  EXPECT_EQ(of_kind(s.events, "finished").size(), 1u);
}

TEST(RunCli, BadUsageIsOneLineWithExitTwo) {
  auto expect_error = [](const std::string& args, const std::string& message) {
    const test::Run r = run_command(kPlumb + " run " + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, "plumb: error: " + message + "\n") << args;
  };
  expect_error("", "no command after --: plumb run [options] -- COMMAND [ARGS...]");
  expect_error("-- plumb-no-such-command", "cannot start 'plumb-no-such-command': no such "
                                           "command (not in PATH)");
  expect_error("--fatal-regex '(' -- true",
               "--fatal-regex '(': not a valid regular expression (missing ): ()");
  expect_error("--progress-regex '(?=x)' -- true",
               "--progress-regex '(?=x)': not a valid regular expression (invalid perl operator: "
               "(?=)");
}

// Checkpoints every 2 steps, a crash at step 5: the restart resumes from iter_0000004 and the
// trainer continues at step 5.
TEST(RunCli, ACrashResumesFromTheLastCompleteCheckpoint) {
  const std::string ckpt = temp_dir("run-ckpt") + "/ckpt";
  const Supervised s = supervise("run-resume", "--checkpoint-dir " + temp_dir("run-ckpt-empty"),
                                 "--steps 6 --save-every 2 --ckpt " + ckpt + " --crash-at 5");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  const Supervised r = supervise("run-resume2", "--checkpoint-dir " + ckpt,
                                 "--steps 8 --save-every 2 --ckpt " + ckpt + " --crash-at 7");
  EXPECT_EQ(r.run.exit_code, 0) << r.run.err;
  const auto checkpoints = of_kind(r.events, "checkpoint");
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0]["path"], ckpt + "/iter_0000006");
  EXPECT_EQ(checkpoints[0]["step"], 6);
  EXPECT_NE(r.run.out.find("attempt 1 starting at step 7\n"), std::string::npos) << r.run.out;
}

// A save interrupted at step 7 (the tracker names an empty folder) is skipped with its reason;
// the restart resumes from step 6.
TEST(RunCli, APartialNewestCheckpointIsSkipped) {
  const std::string ckpt = temp_dir("run-partial") + "/ckpt";
  const Supervised s = supervise("run-partial-ev", "--checkpoint-dir " + temp_dir("run-partial-0"),
                                 "--steps 4 --save-every 2 --ckpt " + ckpt);
  ASSERT_EQ(s.run.exit_code, 0) << s.run.err;
  const Supervised r = supervise("run-partial-ev2", "--checkpoint-dir " + ckpt,
                                 "--steps 8 --save-every 2 --ckpt " + ckpt + " --partial-at 7");
  EXPECT_EQ(r.run.exit_code, 0) << r.run.err;
  const auto checkpoints = of_kind(r.events, "checkpoint");
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0]["path"], ckpt + "/iter_0000006");
  ASSERT_EQ(checkpoints[0]["skipped"].size(), 1u) << checkpoints[0];
  EXPECT_NE(r.run.err.find("plumb run: skipped checkpoint "), std::string::npos) << r.run.err;
  EXPECT_NE(r.run.out.find("attempt 1 starting at step 7\n"), std::string::npos) << r.run.out;
}

// PyTorch Distributed Checkpoint folders step_N/: a save interrupted before .metadata (step 5)
// is skipped; the restart resumes from step_4 and continues at step 5.
TEST(RunCli, ADcpCheckpointWithoutMetadataIsSkipped) {
  const std::string ckpt = temp_dir("run-dcp");
  const Supervised s = supervise("run-dcp-ev", "--checkpoint-dir " + ckpt,
                                 "--steps 8 --save-every 2 --format dcp --ckpt " + ckpt +
                                     " --partial-at 5");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  const auto checkpoints = of_kind(s.events, "checkpoint");
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0]["path"], ckpt + "/step_4");
  EXPECT_EQ(checkpoints[0]["format"], "dcp");
  EXPECT_EQ(checkpoints[0]["step"], 4);
  ASSERT_EQ(checkpoints[0]["skipped"].size(), 1u) << checkpoints[0];
  EXPECT_EQ(checkpoints[0]["skipped"][0]["reason"],
            "step_5/.metadata is missing: an interrupted save?");
  EXPECT_NE(s.run.out.find("attempt 1 starting at step 5\n"), std::string::npos) << s.run.out;
}

// plumb reads the checkpoint directory, never writes it: a tree the job does not touch is the
// same, byte for byte and time for time, after a run with a restart.
TEST(RunCli, TheCheckpointDirectoryIsLeftAsItWas) {
  const std::string ckpt = temp_dir("run-untouched") + "/ckpt";
  ASSERT_EQ(run_command(kTrainer + " --steps 4 --save-every 2 --ckpt " + ckpt).exit_code, 0);
  const std::string listing = "find " + ckpt + " -printf '%p %s %T@ %m\\n' | sort; cat " + ckpt +
                              "/*/* " + ckpt + "/*.txt | sha256sum";
  const test::Run before = run_command(listing);
  const Supervised s = supervise("run-untouched-ev", "--checkpoint-dir " + ckpt,
                                 "--steps 6 --crash-at 5");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  EXPECT_EQ(of_kind(s.events, "checkpoint").size(), 1u);
  EXPECT_EQ(run_command(listing).out, before.out);
}

// A checkpoint directory that exists but is not one stops the run at the start; one that does
// not exist yet is waited for (run_safety_test.cc).
TEST(RunCli, ACheckpointDirectoryThatIsNotOneIsOneLine) {
  const std::string file = temp_dir("run-ckpt-file") + "/ckpt";
  write_file(file, "not a directory\n");
  const test::Run r = run_command(kPlumb + " run --checkpoint-dir " + file + " -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: " + file + ": not a directory; expected the checkpoint "
                   "directory\n");
}

}  // namespace
}  // namespace plumb::test
