// The recovery steps against stand-in vendor tools (tests/fixtures/run/bin) put first in PATH:
// the exact calls in order, the measured durations, failures, the link-down rule, timeouts, the
// errors for a bad configuration, and the relaunch's exclusions.
#include "supervise/recovery.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/environment.h"
#include "common/error.h"
#include "support/processes.h"
#include "support/subprocess.h"

extern char** environ;

namespace plumb::supervise {
namespace {

namespace fs = std::filesystem;

const std::string kBin = std::string(PLUMB_TEST_FIXTURES) + "/run/bin";
const std::string kNpuInfo = std::string(PLUMB_TEST_FIXTURES) + "/run/npu-smi";
const std::string kSystemPath = "/usr/bin:/bin";
constexpr const char* kStandinVariables[] = {
    "PLUMB_STANDIN_GPUS",        "PLUMB_STANDIN_NPU_INFO",     "PLUMB_STANDIN_PIDS",
    "PLUMB_STANDIN_FAIL_RESET",  "PLUMB_STANDIN_RESET_SLEEP",  "PLUMB_STANDIN_LINK_DOWN",
    "PLUMB_STANDIN_LINK_DOWN_CALLS", "PLUMB_STANDIN_STDIN_LOG", "PLUMB_SYSFS_ROOT",
    "PLUMB_STANDIN_TAG"};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The stand-in resets this test started and that still run: marked by PLUMB_STANDIN_TAG in their
// environment, so that a reset of another test running in parallel (ctest -j) does not count.
bool resets_left(const std::string& tag) {
  for (const test::Process& p : test::processes_with("--gpu-reset")) {
    if (test::environment_of(p.pid, "PLUMB_STANDIN_TAG") == tag) return true;
  }
  return false;
}

class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("PATH");
    saved_path_ = path ? path : "";
    dir_ = test::temp_dir(std::string("recovery-") +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    log_ = dir_ + "/calls.log";
    setenv("PATH", (kBin + ":" + kSystemPath).c_str(), 1);
    setenv("PLUMB_STANDIN_LOG", log_.c_str(), 1);
    for (const char* name : kStandinVariables) unsetenv(name);
    sysfs_ = dir_ + "/sys";
    fs::create_directories(sysfs_);
  }

  void TearDown() override {
    setenv("PATH", saved_path_.c_str(), 1);
    unsetenv("PLUMB_STANDIN_LOG");
    for (const char* name : kStandinVariables) unsetenv(name);
  }

  // PATH holding only these stand-ins (and the system's folders, for python3 and sh).
  void path_with(const std::vector<std::string>& tools) {
    const std::string bin = dir_ + "/bin";
    fs::create_directories(bin);
    for (const std::string& tool : tools) fs::create_symlink(kBin + "/" + tool, bin + "/" + tool);
    setenv("PATH", (bin + ":" + kSystemPath).c_str(), 1);
  }

  void port(const std::string& device, const std::string& state) {
    const fs::path folder = fs::path(sysfs_) / "class/infiniband" / device / "ports/1";
    fs::create_directories(folder);
    test::write_file((folder / "state").string(), state + "\n");
  }

  RecoveryConfig config(std::vector<std::string> steps, const std::string& vendor) {
    RecoveryConfig c;
    c.steps = std::move(steps);
    c.vendor = vendor;
    c.link_rechecks = 2;
    c.link_recheck_interval_s = 0.05;
    c.kill_grace_s = 0.5;
    c.sysfs_root = sysfs_;
    return c;
  }

  RecoveryOutcome run(const RecoveryConfig& c, const std::atomic<bool>* stop = nullptr) {
    events_.clear();
    return run_recovery(make_recovery_plan(c), [&](nlohmann::json e) { events_.push_back(e); },
                        stop);
  }

  std::vector<std::string> calls() const {
    return fs::exists(log_) ? lines_of(test::read_file(log_)) : std::vector<std::string>{};
  }

  std::string saved_path_, dir_, log_, sysfs_;
  std::vector<nlohmann::json> events_;
};

// A process that holds a "device" for clear-cache; `ignore_term` makes it survive SIGTERM.
pid_t start_holder(bool ignore_term) {
  const std::vector<std::string> argv =
      ignore_term ? std::vector<std::string>{"/bin/sh", "-c", "trap '' TERM; exec sleep 60"}
                  : std::vector<std::string>{"sleep", "60"};
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ), 0);
  // Ready once it is `sleep` (the shell's trap set before its exec).
  test::wait_for([&] {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    return name == "sleep";
  }, std::chrono::seconds(5));
  return pid;
}

int signal_that_ended(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

// ---- NVIDIA

TEST_F(RecoveryTest, NvidiaStepsCallTheToolsInOrder) {
  path_with({"nvidia-smi"});  // --vendor auto finds it
  port("mlx5_0", "4: ACTIVE");
  const RecoveryOutcome outcome = run(config({"clear-cache", "reset-device", "link-check"}, "auto"));
  EXPECT_EQ(calls(), (std::vector<std::string>{
                         "nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader",
                         "nvidia-smi --query-gpu=index --format=csv,noheader",
                         "nvidia-smi --gpu-reset -i 0", "nvidia-smi --gpu-reset -i 1"}));
  ASSERT_EQ(outcome.steps.size(), 3u);
  EXPECT_EQ(outcome.steps[0].name, "clear-cache");
  EXPECT_EQ(outcome.steps[0].detail, "no process held the devices");
  EXPECT_EQ(outcome.steps[1].name, "reset-device");
  EXPECT_EQ(outcome.steps[1].detail, "reset 2 devices");
  EXPECT_EQ(outcome.steps[2].name, "link-check");
  EXPECT_EQ(outcome.steps[2].detail, "1 link up");
  for (const RecoveryStepTiming& step : outcome.steps) {
    EXPECT_TRUE(step.ok) << step.name;
    EXPECT_GT(step.seconds, 0) << step.name;
  }
  EXPECT_TRUE(outcome.unusable_hosts.empty());
  EXPECT_TRUE(outcome.down_devices.empty());
  ASSERT_EQ(events_.size(), 3u);
  EXPECT_EQ(events_[1]["event"], "recovery_step");
  EXPECT_TRUE(std::regex_match(events_[1]["time"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_EQ(events_[1]["name"], "reset-device");
  EXPECT_EQ(events_[1]["seconds"], outcome.steps[1].seconds);
  EXPECT_EQ(events_[1]["ok"], true);
  EXPECT_EQ(events_[1]["devices"], nlohmann::json({"0", "1"}));
  EXPECT_EQ(events_[1]["output_tail"],
            "$ nvidia-smi --query-gpu=index --format=csv,noheader\n0\n1\n"
            "$ nvidia-smi --gpu-reset -i 0\nGPU 00000000:1A:00.0 was successfully reset.\n"
            "$ nvidia-smi --gpu-reset -i 1\nGPU 00000000:1B:00.0 was successfully reset.\n");
  EXPECT_EQ(events_[2]["devices"], nlohmann::json({"mlx5_0/1"}));
  EXPECT_EQ(events_[2]["down"], nlohmann::json::array());
}

TEST_F(RecoveryTest, NvidiaDevicesOptionLimitsEveryCall) {
  RecoveryConfig c = config({"clear-cache", "reset-device"}, "nvidia");
  c.devices = "1";
  run(c);
  EXPECT_EQ(calls(), (std::vector<std::string>{
                         "nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader -i 1",
                         "nvidia-smi --query-gpu=index --format=csv,noheader",
                         "nvidia-smi --gpu-reset -i 1"}));
  EXPECT_EQ(events_[1]["devices"], nlohmann::json({"1"}));
}

TEST_F(RecoveryTest, ADeviceTheToolDoesNotListFailsTheStep) {
  RecoveryConfig c = config({"reset-device"}, "nvidia");
  c.devices = "1,5";
  const RecoveryOutcome outcome = run(c);
  ASSERT_EQ(outcome.steps.size(), 1u);
  EXPECT_FALSE(outcome.steps[0].ok);
  EXPECT_EQ(outcome.steps[0].detail, "--devices 5: nvidia-smi lists no device 5 (it lists 0, 1)");
}

TEST_F(RecoveryTest, AStepTakesAsLongAsItsTools) {
  setenv("PLUMB_STANDIN_GPUS", "1", 1);
  setenv("PLUMB_STANDIN_RESET_SLEEP", "0.3", 1);
  const RecoveryOutcome outcome = run(config({"reset-device"}, "nvidia"));
  ASSERT_EQ(outcome.steps.size(), 1u);
  EXPECT_GE(outcome.steps[0].seconds, 0.3);
  EXPECT_LT(outcome.steps[0].seconds, 5.0);
}

TEST_F(RecoveryTest, AFailingResetIsReportedWithItsOutput) {
  setenv("PLUMB_STANDIN_FAIL_RESET", "1", 1);
  const RecoveryOutcome outcome = run(config({"reset-device", "link-check"}, "nvidia"));
  ASSERT_EQ(outcome.steps.size(), 2u);
  EXPECT_FALSE(outcome.steps[0].ok);
  EXPECT_EQ(outcome.steps[0].detail, "reset failed on 1 of 2 devices: 1 (exit 255)");
  EXPECT_EQ(events_[0]["ok"], false);
  const std::string tail = events_[0]["output_tail"];
  EXPECT_NE(tail.find("$ nvidia-smi --gpu-reset -i 1\nThe following GPUs could not be reset:\n"
                      "  GPU 00000000:1B:00.0: In use by another client\n"),
            std::string::npos)
      << tail;
  EXPECT_TRUE(outcome.steps[1].ok) << "the steps go on after a failed one";
  EXPECT_EQ(outcome.steps[1].detail, "no RDMA ports");
}

TEST_F(RecoveryTest, AnRdmaPortThatStaysDownMakesTheHostUnusable) {
  port("mlx5_0", "4: ACTIVE");
  port("mlx5_1", "1: DOWN");
  const RecoveryOutcome outcome = run(config({"link-check"}, "nvidia"));
  ASSERT_EQ(outcome.steps.size(), 1u);
  EXPECT_FALSE(outcome.steps[0].ok);
  EXPECT_EQ(outcome.steps[0].detail, "link down on mlx5_1/1 after 2 re-checks 0.05 s apart: host " +
                                         host_name() + " is unusable");
  EXPECT_EQ(outcome.down_devices, std::vector<std::string>{"mlx5_1/1"});
  EXPECT_EQ(outcome.unusable_hosts, std::vector<std::string>{host_name()});
  EXPECT_EQ(events_[0]["down"], nlohmann::json({"mlx5_1/1"}));
}

TEST_F(RecoveryTest, PlumbSysfsRootPointsTheLinkCheckElsewhere) {
  port("mlx5_0", "1: DOWN");
  RecoveryConfig c = config({"link-check"}, "nvidia");
  c.sysfs_root = "";
  setenv("PLUMB_SYSFS_ROOT", sysfs_.c_str(), 1);
  EXPECT_EQ(make_recovery_plan(c).sysfs_root, sysfs_);
  EXPECT_EQ(run(c).down_devices, std::vector<std::string>{"mlx5_0/1"});
}

TEST_F(RecoveryTest, AHangingStepIsKilledAtItsTimeout) {
  setenv("PLUMB_STANDIN_RESET_SLEEP", "30", 1);
  setenv("PLUMB_STANDIN_TAG", "hanging-step", 1);
  RecoveryConfig c = config({"reset-device", "link-check"}, "nvidia");
  c.step_timeout_s = 0.5;
  const RecoveryOutcome outcome = run(c);
  ASSERT_EQ(outcome.steps.size(), 2u);
  EXPECT_FALSE(outcome.steps[0].ok);
  EXPECT_EQ(outcome.steps[0].detail,
            "timed out after 0.5 s (--recover-timeout); killed 'nvidia-smi --gpu-reset -i 0'");
  EXPECT_GE(outcome.steps[0].seconds, 0.5);
  EXPECT_LT(outcome.steps[0].seconds, 3.0);
  EXPECT_FALSE(resets_left("hanging-step"));
  EXPECT_TRUE(outcome.steps[1].ok) << "the next step still runs";
}

TEST_F(RecoveryTest, StoppingPlumbCutsTheStepsShort) {
  setenv("PLUMB_STANDIN_RESET_SLEEP", "30", 1);
  setenv("PLUMB_STANDIN_TAG", "stopped-steps", 1);
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  const RecoveryOutcome outcome = run(config({"reset-device", "link-check"}, "nvidia"), &stop);
  stopper.join();
  EXPECT_TRUE(outcome.stopped);
  ASSERT_EQ(outcome.steps.size(), 1u);
  EXPECT_EQ(outcome.steps[0].detail,
            "stopped (plumb was signalled); killed 'nvidia-smi --gpu-reset -i 0'");
  EXPECT_LT(outcome.steps[0].seconds, 3.0);
  EXPECT_FALSE(resets_left("stopped-steps"));
}

TEST_F(RecoveryTest, ClearCacheStopsTheProcessesHoldingTheGpus) {
  const pid_t polite = start_holder(false);
  const pid_t stubborn = start_holder(true);
  setenv("PLUMB_STANDIN_PIDS",
         (std::to_string(polite) + ":sleep," + std::to_string(stubborn) + ":python").c_str(), 1);
  const RecoveryOutcome outcome = run(config({"clear-cache"}, "nvidia"));
  ASSERT_EQ(outcome.steps.size(), 1u);
  EXPECT_TRUE(outcome.steps[0].ok);
  EXPECT_EQ(outcome.steps[0].detail, "stopped 2 processes (" + std::to_string(polite) + ", " +
                                         std::to_string(stubborn) + "), 1 after SIGKILL");
  EXPECT_EQ(signal_that_ended(polite), SIGTERM);
  EXPECT_EQ(signal_that_ended(stubborn), SIGKILL);
  EXPECT_EQ(events_[0]["stopped_pids"], nlohmann::json({polite, stubborn}));
}

// ---- Ascend

TEST_F(RecoveryTest, AscendStepsCallTheToolsInOrderPerChip) {
  setenv("PLUMB_STANDIN_NPU_INFO", (kNpuInfo + "/info_A3_25.2.0_excerpt.txt").c_str(), 1);
  const std::string stdin_log = dir_ + "/stdin.log";
  setenv("PLUMB_STANDIN_STDIN_LOG", stdin_log.c_str(), 1);
  const RecoveryOutcome outcome = run(config({"clear-cache", "reset-device", "link-check"},
                                             "ascend"));
  EXPECT_EQ(calls(), (std::vector<std::string>{
                         "npu-smi info", "npu-smi info", "npu-smi set -t reset -i 0 -c 0",
                         "npu-smi set -t reset -i 0 -c 1", "npu-smi info",
                         "hccn_tool -i 0 -link -g", "hccn_tool -i 1 -link -g"}));
  EXPECT_EQ(test::read_file(stdin_log), "Y\nY\n") << "npu-smi's confirmation answered";
  ASSERT_EQ(outcome.steps.size(), 3u);
  EXPECT_EQ(outcome.steps[0].detail, "no process held the devices");
  EXPECT_EQ(outcome.steps[1].detail, "reset 2 devices");
  EXPECT_EQ(outcome.steps[2].detail, "2 links up");
  for (const RecoveryStepTiming& step : outcome.steps) EXPECT_TRUE(step.ok) << step.name;
  EXPECT_EQ(events_[2]["devices"], nlohmann::json({"0", "1"}));
}

TEST_F(RecoveryTest, AscendResetFailureNamesTheDevice) {
  setenv("PLUMB_STANDIN_FAIL_RESET", "1", 1);
  const RecoveryOutcome outcome = run(config({"reset-device"}, "ascend"));
  EXPECT_EQ(calls(), (std::vector<std::string>{"npu-smi info", "npu-smi set -t reset -i 0 -c 0",
                                               "npu-smi set -t reset -i 1 -c 0"}));
  EXPECT_FALSE(outcome.steps[0].ok);
  EXPECT_EQ(outcome.steps[0].detail, "reset failed on 1 of 2 devices: 1 (exit 1)");
  EXPECT_NE(events_[0]["output_tail"].get<std::string>().find(
                "$ npu-smi set -t reset -i 1 -c 0\nThis device does not support setting reset.\n"),
            std::string::npos);
}

TEST_F(RecoveryTest, AnAscendLinkThatStaysDownMakesTheHostUnusable) {
  setenv("PLUMB_STANDIN_LINK_DOWN", "1", 1);
  const RecoveryOutcome outcome = run(config({"link-check"}, "ascend"));
  EXPECT_EQ(calls(), (std::vector<std::string>{"npu-smi info", "hccn_tool -i 0 -link -g",
                                               "hccn_tool -i 1 -link -g", "hccn_tool -i 1 -link -g",
                                               "hccn_tool -i 1 -link -g"}));
  ASSERT_EQ(outcome.steps.size(), 1u);
  EXPECT_FALSE(outcome.steps[0].ok);
  EXPECT_EQ(outcome.steps[0].detail, "link down on 1 after 2 re-checks 0.05 s apart: host " +
                                         host_name() + " is unusable");
  EXPECT_EQ(outcome.down_devices, std::vector<std::string>{"1"});
  EXPECT_EQ(outcome.unusable_hosts, std::vector<std::string>{host_name()});
  EXPECT_EQ(events_[0]["down"], nlohmann::json({"1"}));
  EXPECT_EQ(events_[0]["unusable_hosts"], nlohmann::json({host_name()}));
}

TEST_F(RecoveryTest, ALinkThatComesUpOnAReCheckIsFine) {
  setenv("PLUMB_STANDIN_LINK_DOWN", "0", 1);
  setenv("PLUMB_STANDIN_LINK_DOWN_CALLS", "1", 1);
  const RecoveryOutcome outcome = run(config({"link-check"}, "ascend"));
  EXPECT_TRUE(outcome.steps[0].ok);
  EXPECT_EQ(outcome.steps[0].detail, "2 links up");
  EXPECT_TRUE(outcome.down_devices.empty());
  EXPECT_TRUE(outcome.unusable_hosts.empty());
}

TEST_F(RecoveryTest, AscendClearCacheStopsTheProcessInNpuSmisTable) {
  const pid_t holder = start_holder(false);
  setenv("PLUMB_STANDIN_PIDS", (std::to_string(holder) + ":python").c_str(), 1);
  const RecoveryOutcome outcome = run(config({"clear-cache"}, "ascend"));
  EXPECT_EQ(outcome.steps[0].detail,
            "stopped 1 process (" + std::to_string(holder) + "), 0 after SIGKILL");
  EXPECT_EQ(signal_that_ended(holder), SIGTERM);
}

// ---- --on-failure

TEST_F(RecoveryTest, OnFailureRunsTheSitesCommandAndReadsUnusableHosts) {
  path_with({});
  RecoveryConfig c = config({}, "auto");
  c.on_failure = {"echo checking; echo 'plumb: unusable host node7'; "
                  "echo 'plumb: unusable host node3'; exit 3",
                  "true"};
  const RecoveryOutcome outcome = run(c);
  ASSERT_EQ(outcome.steps.size(), 2u);
  EXPECT_EQ(outcome.steps[0].name, "on-failure");
  EXPECT_FALSE(outcome.steps[0].ok);
  EXPECT_EQ(outcome.steps[0].detail, "exit 3; unusable: node7, node3");
  EXPECT_TRUE(outcome.steps[1].ok);
  EXPECT_EQ(outcome.steps[1].detail, "exit 0");
  EXPECT_EQ(outcome.unusable_hosts, (std::vector<std::string>{"node7", "node3"}));
  EXPECT_EQ(events_[0]["command"], c.on_failure[0]);
  EXPECT_EQ(events_[0]["output_tail"],
            "$ /bin/sh -c " + c.on_failure[0] +
                "\nchecking\nplumb: unusable host node7\nplumb: unusable host node3\n");
}

TEST_F(RecoveryTest, TheOutputTailIsTheLast20LinesAtMost2KiBSafeForATerminal) {
  RecoveryConfig c = config({}, "auto");
  c.on_failure = {"seq 1 100", "head -c 5000 /dev/zero | tr '\\0' x", "printf '\\033[31mred\\n'"};
  run(c);
  ASSERT_EQ(events_.size(), 3u);
  std::string last20;
  for (int i = 81; i <= 100; ++i) last20 += std::to_string(i) + "\n";
  EXPECT_EQ(events_[0]["output_tail"], last20);
  EXPECT_EQ(events_[1]["output_tail"], std::string(2047, 'x') + "\n");
  EXPECT_EQ(events_[2]["output_tail"],
            "$ /bin/sh -c printf '\\033[31mred\\n'\n\\x1b[31mred\n");
}

// ---- a bad configuration: one line, exit 2, before anything runs

std::string plan_error(const RecoveryConfig& c) {
  try {
    make_recovery_plan(c);
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kBadInput);
    return error.what();
  }
  return "(no error)";
}

TEST_F(RecoveryTest, ConfigurationErrors) {
  EXPECT_EQ(plan_error(config({"clear-cache", "x"}, "auto")),
            "--recover 'x': unknown step (known: clear-cache, reset-device, link-check)");
  EXPECT_EQ(plan_error(config({"reset-device"}, "rocm")),
            "--vendor 'rocm': unknown vendor (known: auto, nvidia, ascend)");
  RecoveryConfig devices = config({"reset-device"}, "nvidia");
  devices.devices = "0,a";
  EXPECT_EQ(plan_error(devices),
            "--devices '0,a': 'a' is not a device number (expected numbers like 0,1,3)");
  devices.devices = "-1";
  EXPECT_EQ(plan_error(devices),
            "--devices '-1': '-1' is not a device number (expected numbers like 0,1,3)");
  RecoveryConfig timeout = config({"reset-device"}, "nvidia");
  timeout.step_timeout_s = 0;
  EXPECT_EQ(plan_error(timeout), "--recover-timeout 0: expected a number of seconds above 0");
  RecoveryConfig exclude = config({}, "auto");
  exclude.exclude_template = "--exclude";
  EXPECT_EQ(plan_error(exclude), "--exclude-template '--exclude': names neither {host} nor {hosts}");
  EXPECT_EQ(plan_error(config({"reset-device"}, "auto")),
            "--vendor auto: both nvidia-smi and npu-smi are in PATH; pass --vendor nvidia or "
            "--vendor ascend");
}

TEST_F(RecoveryTest, NoVendorToolIsAnError) {
  path_with({});
  EXPECT_EQ(plan_error(config({"reset-device", "link-check"}, "auto")),
            "--recover reset-device: needs nvidia-smi or npu-smi, and neither is in PATH");
  EXPECT_EQ(plan_error(config({"clear-cache"}, "nvidia")), "--vendor nvidia: nvidia-smi is not in PATH");
  EXPECT_EQ(plan_error(config({"clear-cache"}, "ascend")), "--vendor ascend: npu-smi is not in PATH");
  EXPECT_EQ(make_recovery_plan(config({}, "auto")).vendor, "") << "--on-failure alone needs no tool";
}

TEST_F(RecoveryTest, AutoPicksTheVendorWhoseToolIsInPath) {
  path_with({"npu-smi"});
  EXPECT_EQ(make_recovery_plan(config({"reset-device"}, "auto")).vendor, "ascend");
  EXPECT_EQ(plan_error(config({"link-check"}, "auto")),
            "--recover link-check: hccn_tool is not in PATH (on Ascend hosts it is in "
            "/usr/local/Ascend/driver/tools)");
}

// ---- --exclude-template

TEST(WithExclusions, InsertsTheTemplateAfterTheLauncher) {
  const std::vector<std::string> argv{"srun", "python", "train.py"};
  EXPECT_EQ(with_exclusions(argv, "--exclude={hosts}", {"n3", "n1", "n3"}),
            (std::vector<std::string>{"srun", "--exclude=n1,n3", "python", "train.py"}));
  EXPECT_EQ(with_exclusions(argv, "-x {host}", {"n2"}),
            (std::vector<std::string>{"srun", "-x", "n2", "python", "train.py"}));
  EXPECT_EQ(with_exclusions(argv, "--exclude={hosts}", {}), argv);
  EXPECT_EQ(with_exclusions(argv, "", {"n1"}), argv);
  EXPECT_EQ(with_exclusions({}, "--exclude={hosts}", {"n1"}), std::vector<std::string>{});
}

}  // namespace
}  // namespace plumb::supervise
