// plumb under a real Slurm: scripts/slurm-local starts munged, slurmctld and slurmd on this
// machine once per suite; jobs submitted with sbatch (waited for) and srun run plumb comm, plumb
// baseline (--launcher slurm and under srun) and plumb run, and the store must name the job, its
// node list, the hosts and the ranks. Skipped, with the script's reason, only where the daemons
// cannot run (slurm-wlm not installed, not root); CI installs them (scripts/install-deps).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;
const std::string kSlurmLocal = PLUMB_DATA_DIR "/../scripts/slurm-local";
constexpr int kCannotRunHere = 3;  // scripts/slurm-local's exit code

std::string trim(const std::string& s) { return s.substr(0, s.find_last_not_of(" \n") + 1); }

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  const std::string host = name;
  return host.substr(0, host.find('.'));  // slurm-local names the node `hostname -s`
}

class SlurmE2E : public ::testing::Test {
 protected:
  // The cluster's folder is short and under /tmp: slurmd and munged put Unix sockets in it, and
  // a socket's path may not pass 107 bytes (the build tree's may).
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/plumb-slurm-e2e-XXXXXX";
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
    dir_ = temp_dir("slurm-e2e");
  }

  static std::string env() {
    return "PLUMB_SLURM_DIR=" + cluster_ + " SLURM_CONF=" + cluster_ + "/slurm.conf ";
  }

  // Submits `script` with sbatch `options` and waits for it to end; returns the run with the
  // job's exit code, and the job id in `job`. Not sbatch --wait: it polls slurmctld at a growing
  // interval (capped at 10 s), which made a 12 s job take 42 s here; this asks every 0.2 s.
  test::Run sbatch(const std::string& options, const std::string& script, std::string& job) {
    write_file(dir_ + "/job.sh", "#!/bin/sh\n" + script + "\n");
    test::Run r = run_command("cd " + dir_ + " && " + env() + "sbatch --parsable " + options +
                              " -o " + dir_ + "/job.out job.sh");
    job = r.out.substr(0, r.out.find_first_of(";\n"));
    if (r.exit_code != 0 || job.empty()) return r;
    const std::regex ended(
        "JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)"
        ".* ExitCode=([0-9]+):([0-9]+)");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    r.exit_code = -1;
    while (std::chrono::steady_clock::now() < deadline) {
      const test::Run shown = run_command(env() + "scontrol -o show job " + job);
      std::smatch m;
      if (std::regex_search(shown.out, m, ended)) {
        r.exit_code = std::stoi(m[2]) != 0 ? std::stoi(m[2]) : std::stoi(m[3]);
        r.err += shown.out;
        return r;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    r.err += "job " + job + " did not end within 90 s";
    return r;
  }

  nlohmann::json exported(const std::string& id) {
    const test::Run r = run_command(kPlumb + " export " + id + " --db " + dir_ + "/plumb.db");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  test::Run show(const std::string& id) {
    return run_command(kPlumb + " show " + id + " --db " + dir_ + "/plumb.db");
  }

  static std::string cluster_;
  static std::string skip_;
  static std::string problem_;
  std::string dir_;
};

std::string SlurmE2E::cluster_;
std::string SlurmE2E::skip_;
std::string SlurmE2E::problem_;

TEST_F(SlurmE2E, SrunStartsPlumbCommRanksWhoseResultNamesTheJobAndTheStep) {
  const test::Run r =
      run_command("cd " + dir_ + " && " + env() + "srun --mpi=pmix -N1 -n2 " + kPlumb +
                  " comm -e 64K --collectives allreduce -q --json " + dir_ + "/comm.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(read_file(dir_ + "/comm.json"));
  EXPECT_EQ(doc["ranks"], 2);
  EXPECT_EQ(doc["hosts"], nlohmann::json::array({this_host()}));
  const nlohmann::json& job = doc["job"];
  EXPECT_EQ(job["scheduler"], "slurm");
  EXPECT_FALSE(job["job_id"].get<std::string>().empty());
  EXPECT_EQ(job["node_list"], this_host());
  EXPECT_EQ(job["nodes"], 1);
  EXPECT_EQ(job["step"], "0");  // srun outside an allocation: a job of one step
  EXPECT_EQ(job["step_tasks"], 2);
  EXPECT_EQ(job["mpi"], "pmix");
  EXPECT_EQ(job["cluster"], "plumb-local");
}

TEST_F(SlurmE2E, SbatchRunsBaselineWithTheSlurmLauncherAndTheStoreNamesTheJob) {
  std::string job;
  const test::Run r = sbatch("-N1 -n2",
                             kPlumb +
                                 " baseline --launcher slurm --quick --rounds 2 "
                                 "--collectives allreduce,allgather --db " +
                                 dir_ + "/plumb.db -o " + dir_ + " --label slurm-e2e",
                             job);
  const std::string out = read_file(dir_ + "/job.out");
  ASSERT_EQ(r.exit_code, 0) << r.err << out;
  ASSERT_FALSE(job.empty()) << r.out;
  const std::string host = this_host();
  EXPECT_NE(out.find("plumb baseline: Slurm job " + job + " on " + host +
                     ": 2 rank(s), the job's tasks (SLURM_NTASKS=2); srun --mpi=pmix (srun "
                     "--mpi=list: "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("plumb baseline: round 1/2: srun --mpi=pmix --kill-on-bad-exit=1 --ntasks=2 "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("slurm    Slurm job " + job + " on " + host +
                     " (1 node(s)), step 0: 2 task(s), srun --mpi=pmix\n"),
            std::string::npos)
      << out;

  const nlohmann::json doc = exported("latest");
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["source"], "plumb baseline");
  EXPECT_EQ(doc["label"], "slurm-e2e");
  EXPECT_EQ(doc["hosts"], nlohmann::json::array({host}));
  EXPECT_EQ(doc["comm"]["ranks"], 2);
  EXPECT_EQ(doc["comm"]["settings"]["rounds"], 2);
  EXPECT_FALSE(doc["comm"]["results"].empty());
  const nlohmann::json& j = doc["comm"]["job"];
  EXPECT_EQ(j["job_id"], job);
  EXPECT_EQ(j["node_list"], host);
  EXPECT_EQ(j["nodes"], 1);
  EXPECT_EQ(j["tasks"], 2);
  EXPECT_EQ(j["step_tasks"], 2);
  EXPECT_EQ(j["mpi"], "pmix");
  EXPECT_EQ(j["partition"], "debug");
  const test::Run shown = show("latest");
  EXPECT_NE(shown.out.find("# Slurm job " + job + " on " + host +
                           " (1 node(s)), step 0: 2 "
                           "task(s), srun --mpi=pmix\n"),
            std::string::npos)
      << shown.out;
}

TEST_F(SlurmE2E, SrunStartsBaselineRanksThemselvesAndALauncherInsideAStepIsRefused) {
  const test::Run r =
      run_command("cd " + dir_ + " && " + env() + "srun --mpi=pmix -N1 -n2 " + kPlumb +
                  " baseline --quick --rounds 1 --collectives allreduce -q --db " + dir_ +
                  "/plumb.db -o " + dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = exported("latest");
  EXPECT_EQ(doc["comm"]["ranks"], 2);
  EXPECT_EQ(doc["comm"]["job"]["step_tasks"], 2);
  EXPECT_EQ(doc["comm"]["job"]["node_list"], this_host());

  // plumb baseline --launcher slurm starts steps of its own: not from inside one.
  const test::Run nested =
      run_command(env() + "srun -n1 " + kPlumb + " baseline --launcher slurm --db " + dir_ +
                  "/plumb.db -o " + dir_);
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_TRUE(std::regex_search(
      nested.err,
      std::regex("plumb: error: --launcher slurm: this is a task of job step "
                 "[0-9]+\\.0; plumb baseline starts its own steps: run it once in "
                 "the batch script, or leave out --launcher to measure in this step\n")))
      << nested.err;
}

// A Slurm whose srun offers no PMI that this OpenMPI speaks (an srun in front of the real one
// that lists only none and pmi2, which Debian's OpenMPI lacks): OpenMPI's own mpirun starts the
// ranks inside the allocation.
TEST_F(SlurmE2E, WithoutAPmiBothSpeakOpenMpisMpirunStartsTheRanksInTheAllocation) {
  const std::string srun = trim(run_command("command -v srun").out);
  std::filesystem::create_directories(dir_ + "/bin");
  write_file(dir_ + "/bin/srun",
             "#!/bin/sh\n"
             "if [ \"$1\" = --mpi=list ]; then printf 'MPI plugin types are...\\n\\tnone\\n"
             "\\tpmi2\\n'; exit 0; fi\n"
             "exec " + srun + " \"$@\"\n");
  std::filesystem::permissions(dir_ + "/bin/srun", std::filesystem::perms::owner_all);
  std::string job;
  const test::Run r = sbatch("-N1 -n2", "PATH=" + dir_ + "/bin:$PATH " + kPlumb +
                                            " baseline --launcher slurm --quick --rounds 1 "
                                            "--collectives allreduce --db " + dir_ +
                                            "/plumb.db -o " + dir_, job);
  const std::string out = read_file(dir_ + "/job.out");
  ASSERT_EQ(r.exit_code, 0) << r.err << out;
  EXPECT_NE(out.find("; mpirun (srun --mpi=list: none,pmi2; OpenMPI's PMI clients: "),
            std::string::npos) << out;
  EXPECT_NE(out.find("plumb baseline: round 1/1: mpirun -np 2 "), std::string::npos) << out;
  const nlohmann::json doc = exported("latest");
  EXPECT_EQ(doc["comm"]["ranks"], 2);
  EXPECT_EQ(doc["comm"]["job"]["job_id"], job);
  EXPECT_TRUE(doc["comm"]["job"]["step"].is_null());  // one node: mpirun starts them itself
}

TEST_F(SlurmE2E, SbatchRunsPlumbRunSupervisingAStepAndItsRecordNamesTheJob) {
  std::string job;
  const test::Run r = sbatch("-N1 -n2",
                             kPlumb + " run --save --label slurm-run --db " + dir_ +
                                 "/plumb.db -- srun --kill-on-bad-exit=1 -n2 echo step 1",
                             job);
  const std::string out = read_file(dir_ + "/job.out");
  ASSERT_EQ(r.exit_code, 0) << r.err << out;
  EXPECT_NE(out.find("step 1\nstep 1\n"), std::string::npos) << out;
  const nlohmann::json doc = exported("latest");
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["label"], "slurm-run");
  EXPECT_EQ(doc["hosts"], nlohmann::json::array({this_host()}));
  const nlohmann::json& rec = doc["recovery"];
  EXPECT_EQ(rec["result"], "finished");
  EXPECT_EQ(rec["attempts"], 1);
  EXPECT_EQ(rec["job"]["job_id"], job);
  EXPECT_EQ(rec["job"]["node_list"], this_host());
  EXPECT_EQ(rec["job"]["tasks"], 2);
  EXPECT_TRUE(rec["job"]["step"].is_null());  // the batch script is no step
  const test::Run shown = show("latest");
  EXPECT_NE(shown.out.find("# Slurm job " + job + " on " + this_host() + " (1 node(s))\n"),
            std::string::npos)
      << shown.out;
}

// A baseline set in an allocation: the comm sweep by --launcher slurm, the model and memory parts
// from the reference workload (real PyTorch, 2 gloo ranks) started by srun, whose ranks meet at
// the MASTER_ADDR/MASTER_PORT plumb set. Skipped without python3-torch; no drill (kept short).
TEST_F(SlurmE2E, SbatchTakesABaselineSetWhoseJobSrunStarts) {
  if (run_command("/usr/bin/python3 -c 'import torch.distributed'").exit_code != 0) {
    GTEST_SKIP() << "no python3-torch (scripts/install-deps)";
  }
  const std::string workload = PLUMB_DATA_DIR "/../contrib/reference_workload.py";
  std::string job;
  const test::Run r = sbatch(
      "-N1 -n2",
      kPlumb + " baseline --workload --launcher slurm --quick --rounds 1 --collectives allreduce "
               "--skip recovery --steps 8 --profile-steps 2:2 --hang-timeout 60 --label slurm-set "
               "--db " + dir_ + "/plumb.db -o " + dir_ +
          " -- srun --kill-on-bad-exit=1 -n2 /usr/bin/python3 " + workload + " --steps 1000",
      job);
  const std::string out = read_file(dir_ + "/job.out");
  ASSERT_EQ(r.exit_code, 0) << r.err << out;
  EXPECT_NE(out.find("plumb baseline: [3/6] model: srun --kill-on-bad-exit=1 -n2 "), std::string::npos)
      << out;
  const nlohmann::json doc = exported("latest");
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["source"], "plumb baseline --workload");
  EXPECT_EQ(doc["label"], "slurm-set");
  EXPECT_EQ(doc["comm"]["job"]["job_id"], job);
  EXPECT_EQ(doc["step"]["ranks"].size(), 2u);
  EXPECT_EQ(doc["memory"]["ranks"].size(), 2u);
  EXPECT_TRUE(doc["recovery"].is_null());
  EXPECT_EQ(doc["missing"], nlohmann::json({{"recovery", "skipped (--skip recovery)"},
                                            {"serve", "not asked for: no --serve-url"}}));
}

// Needs no Slurm: outside an allocation --launcher slurm says so in one line.
TEST(SlurmCli, LauncherSlurmOutsideAnAllocation) {
  const std::string dir = temp_dir("slurm-cli");
  const test::Run r = run_command("env -u SLURM_JOB_ID -u SLURM_JOBID " + kPlumb +
                                  " baseline --launcher slurm --db " + dir + "/plumb.db -o " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "plumb: error: --launcher slurm: not inside a Slurm allocation (SLURM_JOB_ID "
            "is not set): run plumb baseline in an sbatch script or an salloc shell "
            "(docs/slurm.md)\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/plumb.db"));  // nothing was opened
}

}  // namespace
}  // namespace plumb::test
