// plumb check node --slurm under a real Slurm (scripts/slurm-local: munged, slurmctld and slurmd
// on loopback, started once for the suite): a failing pass drains the node with a "plumb:" reason,
// a passing pass resumes it, a node drained by hand is never resumed, and the partition guard
// holds; and --npd's exit status and one line. The fault: the check file expects 8 accelerators of
// a node read under an empty --root, with no vendor tool on PATH (0 found: critical); the passing
// file expects none. Skipped where the daemons cannot run (not root, slurm-wlm not installed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;
const std::string kSlurmLocal = PLUMB_DATA_DIR "/../scripts/slurm-local";
constexpr int kCannotRunHere = 3;  // scripts/slurm-local's exit code
// The check every fault here goes through; the suite is skipped on a tree without it.
constexpr const char* kFaultCheck = "accel.count";

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  const std::string host = name;
  return host.substr(0, host.find('.'));  // slurm-local names the node `hostname -s`
}

// Why this tree cannot inject the fault, or "" when it can.
std::string fault_missing() {
  const test::Run list = run_command(kPlumb + " check list");
  if (list.out.find(std::string(kFaultCheck) + " ") != std::string::npos) return "";
  return std::string("plumb check list has no ") + kFaultCheck +
         " (the accelerator checks), the check these tests fail on purpose";
}

// A node whose accelerators are all missing, or that has none and expects none: an empty tree,
// and a PATH that holds scontrol and sinfo but no nvidia-smi or npu-smi.
struct FakeNode {
  std::string dir = temp_dir("check-slurm");
  std::string root = dir + "/root";
  std::string bin = dir + "/bin";
  std::string failing = dir + "/fail.yaml";
  std::string passing = dir + "/pass.yaml";

  FakeNode() {
    std::filesystem::create_directories(root);
    std::filesystem::create_directories(bin);
    for (const char* tool : {"scontrol", "sinfo"}) {
      const test::Run where = run_command(std::string("command -v ") + tool);
      const std::string path = where.out.substr(0, where.out.find('\n'));
      if (!path.empty()) std::filesystem::create_symlink(path, bin + "/" + tool);
    }
    const std::string head = "schema: plumb.check-file/1\nsku: e2e\nchecks:\n";
    write_file(failing, head + "  accel.count: {expected: 8}\n");
    write_file(passing, head + "  accel.count: {expected: 0}\n");
  }

  std::string check(const std::string& file, const std::string& options) const {
    return "PATH=" + bin + " " + kPlumb + " check node --only accel.count --root " + root +
           " --config " + file + " " + options;
  }
};

class CheckSlurmE2E : public ::testing::Test {
 protected:
  // Short and under /tmp: slurmd and munged put Unix sockets in it (at most 107 bytes).
  static void SetUpTestSuite() {
    skip_ = fault_missing();
    if (!skip_.empty()) return;
    char pattern[] = "/tmp/plumb-cslurm-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
      problem_ = "cannot create a folder under /tmp";
      return;
    }
    cluster_ = pattern;
    const test::Run started = run_command(env() + kSlurmLocal + " start");
    if (started.exit_code == kCannotRunHere) {
      skip_ = started.err;
    } else if (started.exit_code != 0) {
      problem_ = "scripts/slurm-local start failed: " + started.err;
    }
  }

  static void TearDownTestSuite() {
    if (cluster_.empty()) return;
    const test::Run stopped = run_command(env() + kSlurmLocal + " stop");
    if (stopped.exit_code == 0) std::filesystem::remove_all(cluster_);
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(problem_.empty()) << problem_;
    node_ = std::make_unique<FakeNode>();
  }

  // Each test leaves the node in service for the next.
  void TearDown() override {
    if (skip_.empty() && problem_.empty() && state().find("DRAIN") != std::string::npos) {
      scontrol("update NodeName=" + host_ + " State=RESUME");
    }
  }

  static std::string env() {
    return "PLUMB_SLURM_DIR=" + cluster_ + " SLURM_CONF=" + cluster_ + "/slurm.conf ";
  }

  test::Run scontrol(const std::string& args) const { return run_command(env() + "scontrol " + args); }

  // "State=IDLE+DRAIN" and "Reason=..." of `scontrol show node`.
  std::string field(const std::string& key) const {
    const test::Run shown = scontrol("show node " + host_);
    std::smatch m;
    const std::regex line("(^|\\s)" + key + "=([^\\n]*)");
    if (!std::regex_search(shown.out, m, line)) return "";
    const std::string value = m[2];
    return key == "State" ? value.substr(0, value.find(' ')) : value;
  }
  std::string state() const { return field("State"); }
  std::string reason() const { return field("Reason"); }

  test::Run slurm_check(const std::string& file, const std::string& options = "") const {
    return run_command(env() + node_->check(file, "--slurm --node " + host_ + " " + options));
  }

  static std::string cluster_;
  static std::string skip_;
  static std::string problem_;
  const std::string host_ = this_host();
  std::unique_ptr<FakeNode> node_;
};

std::string CheckSlurmE2E::cluster_;
std::string CheckSlurmE2E::skip_;
std::string CheckSlurmE2E::problem_;

TEST_F(CheckSlurmE2E, AFailingPassDrainsTheNodeWithAPlumbReasonAndAPassingOneResumesIt) {
  const test::Run failed = slurm_check(node_->failing, "--max-drain-fraction 1");
  EXPECT_EQ(failed.exit_code, 2) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("\nplumb check: drained " + host_ + ": plumb: accel.count: "),
            std::string::npos)
      << failed.out;
  EXPECT_NE(state().find("DRAIN"), std::string::npos) << state();
  EXPECT_EQ(reason().rfind("plumb: accel.count: ", 0), 0u) << reason();

  const test::Run again = slurm_check(node_->failing, "--max-drain-fraction 1");
  EXPECT_NE(again.out.find("plumb check: " + host_ + " stays drained: plumb: accel.count: "),
            std::string::npos)
      << again.out;

  const test::Run passed = slurm_check(node_->passing);
  EXPECT_EQ(passed.exit_code, 0) << passed.out << passed.err;
  EXPECT_NE(passed.out.find("\nplumb check: resumed " + host_ +
                            ": it passes now (plumb had drained it: plumb: accel.count: "),
            std::string::npos)
      << passed.out;
  EXPECT_EQ(state().find("DRAIN"), std::string::npos) << state();
}

TEST_F(CheckSlurmE2E, ANodeDrainedByHandIsNeverResumedNorRelabelled) {
  const std::string by_hand = "disk replaced, burn-in pending (ticket 4411)";
  ASSERT_EQ(
      scontrol("update NodeName=" + host_ + " State=DRAIN Reason=\"" + by_hand + "\"").exit_code,
      0);

  const test::Run passed = slurm_check(node_->passing);
  EXPECT_EQ(passed.exit_code, 0) << passed.out << passed.err;
  EXPECT_NE(passed.out.find("\nplumb check: " + host_ + " passes but stays drained: its reason '" +
                            by_hand + "' was not set by plumb\n"),
            std::string::npos)
      << passed.out;
  EXPECT_NE(state().find("DRAIN"), std::string::npos) << state();

  const test::Run failed = slurm_check(node_->failing, "--max-drain-fraction 1");
  EXPECT_EQ(failed.exit_code, 2);
  EXPECT_NE(
      failed.out.find("and stays drained as it was, for '" + by_hand + "' (not set by plumb)"),
      std::string::npos)
      << failed.out;
  EXPECT_EQ(reason().rfind(by_hand + " [", 0), 0u) << reason();
}

// The loopback cluster is one node in one partition: draining it takes 100% of the partition.
TEST_F(CheckSlurmE2E, NeverDrainsMoreThanTheFractionOfThePartition) {
  const test::Run failed = slurm_check(node_->failing);  // the default, 0.1
  EXPECT_EQ(failed.exit_code, 2) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("\nplumb check: did not drain " + host_ + " (plumb: accel.count: "),
            std::string::npos)
      << failed.out;
  EXPECT_NE(failed.out.find("): partition debug would have 1 of 1 nodes drained (100%), over "
                            "--max-drain-fraction 0.1; drain it by hand if it must go\n"),
            std::string::npos)
      << failed.out;
  EXPECT_EQ(state().find("DRAIN"), std::string::npos) << state();
}

// node-problem-detector reads the exit status (0 OK, 1 NonOK, 2 Unknown) and standard output cut
// to max_output_length (80): one line, within it.
TEST(CheckNpdE2E, ExitsWithNpdsStatusAndPrintsOneLineWithinMaxOutputLength) {
  const std::string missing = fault_missing();
  if (!missing.empty()) GTEST_SKIP() << missing;
  const FakeNode node;
  const test::Run failed = run_command(node.check(node.failing, "--npd"));
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_EQ(failed.out.rfind("critical: accel.count: ", 0), 0u) << failed.out;
  EXPECT_EQ(failed.out.find('\n'), failed.out.size() - 1) << failed.out;
  EXPECT_LE(failed.out.size() - 1, 80u) << failed.out;
  const test::Run passed = run_command(node.check(node.passing, "--npd"));
  EXPECT_EQ(passed.exit_code, 0) << passed.err;
  EXPECT_EQ(passed.out, "ok: 1 check passed\n");
}

}  // namespace
}  // namespace plumb::test
