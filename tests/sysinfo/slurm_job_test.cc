#include "sysinfo/slurm_job.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "support/subprocess.h"

namespace plumb::sysinfo {
namespace {

using Env = std::map<std::string, std::string>;

std::optional<SlurmJob> job_of(const Env& env) {
  return slurm_job([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// The variables of task 1 of `srun --mpi=pmix -n 2` inside `sbatch -N1 --ntasks-per-node=2`,
// as slurmd 22.05 (Debian 12) set them on scripts/slurm-local's node.
const Env kStepTask = {
    {"SLURM_JOB_ID", "8"},
    {"SLURM_JOBID", "8"},
    {"SLURM_JOB_NAME", "c.sh"},
    {"SLURM_CLUSTER_NAME", "plumb-local"},
    {"SLURM_JOB_PARTITION", "debug"},
    {"SLURM_JOB_NODELIST", "vm"},
    {"SLURM_NODELIST", "vm"},
    {"SLURM_JOB_NUM_NODES", "1"},
    {"SLURM_NNODES", "1"},
    {"SLURM_NTASKS", "2"},
    {"SLURM_NTASKS_PER_NODE", "2"},
    {"SLURM_TASKS_PER_NODE", "2"},
    {"SLURM_STEP_ID", "0"},
    {"SLURM_STEP_NODELIST", "vm"},
    {"SLURM_STEP_NUM_TASKS", "2"},
    {"SLURM_PROCID", "1"},
    {"SLURM_MPI_TYPE", "pmix"},
};

TEST(SlurmJob, OutsideAJobThereIsNone) {
  EXPECT_FALSE(job_of({}).has_value());
  EXPECT_FALSE(job_of({{"SLURM_CONF", "/etc/slurm/slurm.conf"}}).has_value());
}

TEST(SlurmJob, AStepTaskNamesTheJobItsNodesAndTheStep) {
  const std::optional<SlurmJob> job = job_of(kStepTask);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->id, "8");
  EXPECT_EQ(job->node_list, "vm");
  EXPECT_EQ(job->nodes, 1);
  EXPECT_EQ(job->tasks, 2);
  EXPECT_EQ(job->step, "0");
  EXPECT_EQ(job->step_tasks, 2);
  EXPECT_EQ(job->gpus_on_node, 0);
  EXPECT_EQ(slurm_job_json(*job).dump(),
            R"({"cluster":"plumb-local","gpus_on_node":0,"job_id":"8","job_name":"c.sh",)"
            R"("mpi":"pmix","node_list":"vm","nodes":1,"partition":"debug","scheduler":"slurm",)"
            R"("step":"0","step_node_list":"vm","step_tasks":2,"tasks":2,"tasks_per_node":"2"})");
}

TEST(SlurmJob, TheBatchScriptOfAJobThatAskedForNoTaskCount) {
  // sbatch -N2 --gpus-per-node=8 (no -n): no SLURM_NTASKS, no step.
  const std::optional<SlurmJob> job = job_of({{"SLURM_JOBID", "77"},
                                              {"SLURM_NODELIST", "gpu[01-02]"},
                                              {"SLURM_NNODES", "2"},
                                              {"SLURM_TASKS_PER_NODE", "1(x2)"},
                                              {"SLURM_GPUS_ON_NODE", "8"}});
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->id, "77");  // the older names are read too
  EXPECT_EQ(job->node_list, "gpu[01-02]");
  EXPECT_EQ(job->nodes, 2);
  EXPECT_EQ(job->tasks, 0);
  EXPECT_EQ(job->gpus_on_node, 8);
  const nlohmann::json j = slurm_job_json(*job);
  EXPECT_TRUE(j["step"].is_null());
  EXPECT_TRUE(j["mpi"].is_null());
}

TEST(SlurmJob, TasksPerNodeInSlurmsCompressedForm) {
  EXPECT_EQ(total_tasks("2"), 2);
  EXPECT_EQ(total_tasks("2(x3),1"), 7);  // sbatch(1)'s own example
  EXPECT_EQ(total_tasks("8(x128)"), 1024);
  EXPECT_EQ(test::error_message([] { total_tasks("2(x3"); }),
            "SLURM_TASKS_PER_NODE='2(x3': '2(x3' is not COUNT or COUNT(xNODES)");
  EXPECT_EQ(test::error_message([] { total_tasks(""); }), "SLURM_TASKS_PER_NODE is empty");
  EXPECT_EQ(test::error_message([] { total_tasks("65536(x65536)"); }),
            "SLURM_TASKS_PER_NODE='65536(x65536)': too many tasks");
}

TEST(SlurmJob, ACountThatIsNotAWholeNumberNamesItsVariable) {
  Env env = kStepTask;
  env["SLURM_JOB_NUM_NODES"] = "four";
  EXPECT_EQ(test::error_message([&] { job_of(env); }),
            "SLURM_JOB_NUM_NODES='four': expected a whole number");
  env = kStepTask;
  env["SLURM_GPUS_ON_NODE"] = "-1";
  EXPECT_EQ(test::error_message([&] { job_of(env); }),
            "SLURM_GPUS_ON_NODE='-1': expected a whole number");
  env = kStepTask;
  env["SLURM_TASKS_PER_NODE"] = "2(y3)";
  EXPECT_EQ(test::error_message([&] { job_of(env); }),
            "SLURM_TASKS_PER_NODE='2(y3)': '2(y3)' is not COUNT or COUNT(xNODES)");
}

}  // namespace
}  // namespace plumb::sysinfo
