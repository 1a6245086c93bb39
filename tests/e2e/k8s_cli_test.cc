// plumb k8s job through the binary: the manifest written to a file parses as the Job it names,
// and mistakes are one clear line with exit 2, nothing written.
#include <yaml-cpp/yaml.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "support/subprocess.h"

namespace plumb {
namespace {

using test::run_command;

const std::string kJob = std::string(PLUMB_BIN) + " k8s job ";

TEST(K8sCli, WritesAVolcanoJobForFourNodesOfEight) {
  const std::string dir = test::temp_dir("k8s-cli");
  const test::Run r = run_command(kJob + "--nodes 4 --devices-per-node 8 --queue research "
                                  "--priority-class high --network-topology hard --highest-tier 2 "
                                  "-o " + dir + "/job.yaml -- baseline --quick");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const YAML::Node job = YAML::LoadFile(dir + "/job.yaml");
  EXPECT_EQ(job["apiVersion"].as<std::string>(), "batch.volcano.sh/v1alpha1");
  EXPECT_EQ(job["kind"].as<std::string>(), "Job");
  EXPECT_EQ(job["spec"]["minAvailable"].as<int>(), 5);
  EXPECT_EQ(job["spec"]["queue"].as<std::string>(), "research");
  EXPECT_EQ(job["spec"]["tasks"][1]["replicas"].as<int>(), 4);
  EXPECT_EQ(job["spec"]["tasks"][1]["template"]["spec"]["containers"][0]["resources"]["limits"]
               ["nvidia.com/gpu"].as<int>(), 8);
  EXPECT_NE(job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"][2]
                .as<std::string>().find("plumb baseline --hostfile /tmp/plumb.hosts --ranks 32 --quick"),
            std::string::npos);
}

TEST(K8sCli, KueueJobSetToStandardOutput) {
  const test::Run r = run_command(kJob + "--nodes 2 --devices-per-node 16 --vendor ascend "
                                  "--scheduler kueue --queue team-a -- comm --quick");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node js = YAML::Load(r.out);
  EXPECT_EQ(js["kind"].as<std::string>(), "JobSet");
  EXPECT_EQ(js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"].as<std::string>(), "team-a");
  EXPECT_EQ(js["spec"]["replicatedJobs"][1]["template"]["spec"]["completions"].as<int>(), 2);
}

// --launcher ray: the ConfigMap with the head's script, then the RayJob a scheduler gangs.
TEST(K8sCli, RayJobUnderKueueToStandardOutput) {
  const test::Run r = run_command(kJob + "--launcher ray --scheduler kueue --queue team-a --nodes 2 "
                                  "--devices-per-node 8 -- baseline --quick");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<YAML::Node> docs = YAML::LoadAll(r.out);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0]["kind"].as<std::string>(), "ConfigMap");
  EXPECT_NE(docs[0]["data"]["run.sh"].as<std::string>().find(
                "plumb baseline --hostfile /tmp/plumb.hosts --ranks 16 --quick"),
            std::string::npos);
  const YAML::Node job = docs[1];
  EXPECT_EQ(job["kind"].as<std::string>(), "RayJob");
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"].as<std::string>(), "team-a");
  EXPECT_TRUE(job["spec"]["shutdownAfterJobFinishes"].as<bool>());
  EXPECT_FALSE(job["spec"]["rayClusterSpec"]["enableInTreeAutoscaling"].as<bool>());
  EXPECT_EQ(job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["minReplicas"].as<int>(), 2);
}

TEST(K8sCli, RayClusterUnderKai) {
  const test::Run r = run_command(kJob + "--launcher ray --ray-kind cluster --scheduler kai "
                                  "--queue team-a --nodes 2 --devices-per-node 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node cluster = YAML::LoadAll(r.out).at(1);
  EXPECT_EQ(cluster["kind"].as<std::string>(), "RayCluster");
  EXPECT_EQ(cluster["metadata"]["labels"]["kai.scheduler/queue"].as<std::string>(), "team-a");
}

TEST(K8sCli, MistakesAreOneLineAndExitTwo) {
  const std::string dir = test::temp_dir("k8s-cli-bad");
  const std::string out = " -o " + dir + "/job.yaml";
  const std::pair<std::string, std::string> cases[] = {
      {"--nodes 4 --devices-per-node 8 --scheduler slurm",
       "plumb: error: --scheduler: unknown scheduler 'slurm'; expected one of volcano, kueue, kai\n"},
      {"--nodes 0 --devices-per-node 8", "plumb: error: --nodes must be from 1 to 65536, got 0\n"},
      {"--nodes 4 --devices-per-node 8 --scheduler kueue --network-topology hard --highest-tier 2",
       "plumb: error: --network-topology is Volcano's (HyperNode tiers); --scheduler kueue has no "
       "such constraint: leave it out\n"},
      {"--nodes 4 --devices-per-node 8 --scheduler kai",
       "plumb: error: --scheduler kai gangs KubeRay objects here: give --launcher ray (plumb writes "
       "no MPI job for it)\n"},
      {"--nodes 4 --devices-per-node 8 --ray-kind cluster",
       "plumb: error: --ray-kind is for --launcher ray\n"},
      {"--nodes 4 --devices-per-node 8 --name My_Job",
       "plumb: error: --name 'My_Job': not a DNS label (RFC 1123): 1 to 63 of a-z, 0-9 and '-', "
       "beginning and ending with a letter or digit\n"},
  };
  for (const auto& [args, message] : cases) {
    const test::Run r = run_command(kJob + args + out);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, message) << args;
    EXPECT_FALSE(std::filesystem::exists(dir + "/job.yaml")) << args;
  }
  // The command table grows: its list is checked up to the first names.
  const test::Run typo = run_command(kJob + "--nodes 4 --devices-per-node 8" + out + " -- baselin --quick");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.err.rfind("plumb: error: -- COMMAND: unknown plumb command 'baselin' (did you mean "
                           "'baseline'?); expected one of baseline, comm, ", 0),
            0u)
      << typo.err;
  EXPECT_EQ(typo.err.find('\n'), typo.err.size() - 1) << typo.err;
  const test::Run missing = run_command(kJob + "--devices-per-node 8");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--nodes is required"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace plumb
