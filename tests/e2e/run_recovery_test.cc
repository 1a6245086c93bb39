// plumb run --recover / --on-failure / --exclude-template and plumb recover end to end, with the
// stand-in vendor tools of tests/fixtures/run/bin first in PATH (issue 12, point 2).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "support/run_supervised.h"

namespace plumb::test {
namespace {

const std::string kBin = std::string(PLUMB_TEST_FIXTURES) + "/run/bin";

// The environment that puts the stand-ins first and logs their calls to `log`.
std::string standins(const std::string& log, const std::string& extra = "") {
  return "env PATH=" + kBin + ":$PATH PLUMB_STANDIN_LOG=" + log + " " + extra + " ";
}

Supervised supervise_with(const std::string& name, const std::string& env,
                          const std::string& options, const std::string& command) {
  const std::string events = temp_dir(name) + "/events.jsonl";
  Supervised s;
  s.run = run_command(env + kPlumb + " run --backoff 0.1 --kill-grace 2 --events " + events + " " +
                      options + " -- " + command);
  s.events = events_of(events);
  return s;
}

TEST(RunRecovery, TheStepsRunInOrderAfterACrashEachTimedAndReported) {
  const std::string log = temp_dir("rec-nv") + "/calls";
  const Supervised s = supervise_with(
      "rec-nv-run", standins(log, "PLUMB_STANDIN_RESET_SLEEP=0.2"),
      "--vendor nvidia --recover clear-cache,reset-device", kTrainer + " --steps 4 --crash-at 2");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  const auto steps = of_kind(s.events, "recovery_step");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0]["name"], "clear-cache");
  EXPECT_EQ(steps[1]["name"], "reset-device");
  EXPECT_TRUE(steps[1]["ok"].get<bool>());
  EXPECT_GE(steps[1]["seconds"].get<double>(), 2 * 0.2) << "two GPUs, 0.2 s a reset";
  EXPECT_EQ(read_file(log),
            "nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader\n"
            "nvidia-smi --query-gpu=index --format=csv,noheader\n"
            "nvidia-smi --gpu-reset -i 0\n"
            "nvidia-smi --gpu-reset -i 1\n");
  EXPECT_NE(s.run.err.find("plumb run: recovery step reset-device: ok ("), std::string::npos)
      << s.run.err;
  // The recovery baseline's row names both steps with their times.
  EXPECT_NE(s.run.err.find("clear-cache "), std::string::npos);
  EXPECT_NE(s.run.err.find(" s, reset-device "), std::string::npos) << s.run.err;
}

TEST(RunRecovery, AFailingResetIsReportedAndTheRestartStillHappens) {
  const std::string log = temp_dir("rec-fail") + "/calls";
  const Supervised s = supervise_with(
      "rec-fail-run", standins(log, "PLUMB_STANDIN_FAIL_RESET=1"),
      "--vendor nvidia --recover reset-device", kTrainer + " --steps 3 --crash-at 2");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  const auto steps = of_kind(s.events, "recovery_step");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_FALSE(steps[0]["ok"].get<bool>());
  EXPECT_NE(steps[0]["output_tail"].get<std::string>().find("nvidia-smi --gpu-reset -i 1"),
            std::string::npos)
      << steps[0].dump();
  EXPECT_NE(s.run.err.find("plumb run: recovery step reset-device: FAILED ("), std::string::npos)
      << s.run.err;
  EXPECT_EQ(of_kind(s.events, "finished").size(), 1u);
}

TEST(RunRecovery, AHostWithALinkDownIsLeftOutOfTheRelaunch) {
  const std::string log = temp_dir("rec-link") + "/calls";
  const Supervised s = supervise_with(
      "rec-link-run", standins(log, "PLUMB_STANDIN_LINK_DOWN=1"),
      "--vendor ascend --recover link-check --link-rechecks 1 --link-recheck-interval 0.1 "
      "--exclude-template --exclude={hosts}",
      "srun --nodes=2 " + kTrainer + " --steps 3 --crash-at 2");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  const auto steps = of_kind(s.events, "recovery_step");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0]["name"], "link-check");
  EXPECT_FALSE(steps[0]["ok"].get<bool>());
  EXPECT_EQ(steps[0]["down"], nlohmann::json::array({"1"}));
  const std::string host = run_command("hostname").out.substr(0, run_command("hostname").out.find('\n'));
  const auto restarts = of_kind(s.events, "restart");
  ASSERT_EQ(restarts.size(), 1u);
  EXPECT_EQ(restarts[0]["excluded_hosts"], nlohmann::json::array({host}));
  const auto starts = of_kind(s.events, "start");
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[1]["argv"][0], "srun");
  EXPECT_EQ(starts[1]["argv"][1], "--exclude=" + host);
  EXPECT_EQ(starts[1]["argv"][2], "--nodes=2");
  EXPECT_NE(read_file(log).find("srun --exclude=" + host + "\n"), std::string::npos);
  EXPECT_NE(s.run.err.find("plumb run: host " + host + " is unusable: left out of the relaunch\n"),
            std::string::npos)
      << s.run.err;
}

TEST(RunRecovery, ASiteStepCanNameAnUnusableHost) {
  const std::string log = temp_dir("rec-site") + "/calls";
  const Supervised s = supervise_with(
      "rec-site-run", standins(log),
      "--on-failure 'echo checking; echo plumb: unusable host node17' "
      "--exclude-template --exclude={hosts}",
      "srun " + kTrainer + " --steps 3 --crash-at 2");
  EXPECT_EQ(s.run.exit_code, 0) << s.run.err;
  const auto steps = of_kind(s.events, "recovery_step");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0]["name"], "on-failure");
  EXPECT_TRUE(steps[0]["ok"].get<bool>());
  EXPECT_EQ(of_kind(s.events, "start")[1]["argv"][1], "--exclude=node17");
}

TEST(RunRecovery, AnUnknownStepIsOneLineBeforeTheJobStarts) {
  const test::Run r = run_command(kPlumb + " run --recover reset-device,reboot -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --recover 'reboot': unknown step (known: clear-cache, "
                   "reset-device, link-check)\n");
}

TEST(PlumbRecover, PrintsEachStepAndTheUnusableHostAndFails) {
  const std::string log = temp_dir("recover-cli") + "/calls";
  const test::Run r = run_command(standins(log, "PLUMB_STANDIN_LINK_DOWN=0") + kPlumb +
                                  " recover --vendor ascend --recover reset-device,link-check "
                                  "--link-rechecks 0");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string host = run_command("hostname").out.substr(0, run_command("hostname").out.find('\n'));
  EXPECT_NE(r.out.find("recovery step reset-device: ok ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recovery step link-check: FAILED ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nplumb: unusable host " + host + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(log),
            "npu-smi info\nnpu-smi set -t reset -i 0 -c 0\nnpu-smi set -t reset -i 1 -c 0\n"
            "npu-smi info\nhccn_tool -i 0 -link -g\nhccn_tool -i 1 -link -g\n");
}

TEST(PlumbRecover, NothingAskedForIsOneLine) {
  const test::Run r = run_command(kPlumb + " recover");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: nothing to do: give --recover STEPS and/or --on-failure CMD\n");
}

}  // namespace
}  // namespace plumb::test
