// plumb k8s job's manifests, checked without an API server: the YAML parses, and a structural
// check written here holds it against the fields Volcano's, JobSet's and Kueue's documentation
// and CRDs name (docs/k8s.md lists the sources): the gang (minAvailable = all replicas), the
// plugins, the device limits, networkTopology, the restart policies; Kueue's queue label,
// parallelism and completions. Golden files pin the exact text of two cases.
#include <yaml-cpp/yaml.h>

#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "k8s/job_spec.h"
#include "k8s/kueue_job.h"
#include "k8s/schedulers.h"
#include "k8s/volcano_job.h"
#include "k8s/yaml_emit.h"
#include "support/subprocess.h"

namespace plumb::k8s {
namespace {

JobSpec four_by_eight() {
  JobSpec s;
  s.nodes = 4;
  s.devices_per_node = 8;
  return s;
}

YAML::Node manifest(const JobSpec& spec) { return YAML::Load(job_manifest(spec)); }

std::string str(const YAML::Node& n) { return n.as<std::string>(); }

// The pod template of a Volcano task or of a JobSet's replicated Job.
YAML::Node container(const YAML::Node& pod_spec) {
  EXPECT_EQ(pod_spec["containers"].size(), 1u);
  return pod_spec["containers"][0];
}

// Volcano's admission webhook refuses a policy list with an event and an exit code in one
// policy, a repeated event or exit code, or exit code 0 (pkg/webhooks/.../validate_job.go
// validatePolicies).
void check_volcano_policies(const YAML::Node& policies) {
  ASSERT_TRUE(policies.IsSequence());
  std::set<std::string> events;
  std::set<int> codes;
  for (const YAML::Node& p : policies) {
    EXPECT_NE(p["event"].IsDefined(), p["exitCode"].IsDefined()) << "one of event and exitCode";
    EXPECT_TRUE(p["action"].IsScalar());
    if (p["event"]) {
      EXPECT_TRUE(events.insert(str(p["event"])).second) << str(p["event"]);
    }
    if (p["exitCode"]) {
      EXPECT_NE(p["exitCode"].as<int>(), 0);
      EXPECT_TRUE(codes.insert(p["exitCode"].as<int>()).second);
    }
  }
}

bool has_policy(const YAML::Node& policies, const std::string& event, const std::string& action) {
  for (const YAML::Node& p : policies) {
    if (p["event"] && str(p["event"]) == event && str(p["action"]) == action) return true;
  }
  return false;
}

// An env value Kubernetes reads as a string: a quoted scalar, or plain text YAML reads as one.
void check_env_strings(const YAML::Node& c) {
  for (const YAML::Node& e : c["env"]) {
    const std::string v = str(e["value"]);
    EXPECT_TRUE(e["value"].Tag() == "!" || !needs_quotes(v)) << str(e["name"]) << "=" << v;
  }
}

void check_worker_pod(const YAML::Node& pod, const std::string& resource, int devices) {
  EXPECT_TRUE(pod["hostNetwork"].as<bool>());
  EXPECT_TRUE(pod["hostIPC"].as<bool>());
  EXPECT_EQ(str(pod["dnsPolicy"]), "ClusterFirstWithHostNet");
  EXPECT_EQ(str(pod["restartPolicy"]), "Never");
  const YAML::Node c = container(pod);
  EXPECT_EQ(c["resources"]["limits"][resource].as<int>(), devices);
  EXPECT_EQ(str(c["securityContext"]["capabilities"]["add"][0]), "IPC_LOCK");
  EXPECT_EQ(str(c["command"][2]), worker_script());
}

TEST(VolcanoJob, StructureOfFourNodesOfEight) {
  JobSpec spec = four_by_eight();
  spec.network_topology = "hard";
  spec.highest_tier = 2;
  spec.priority_class = "high-priority";
  spec.queue = "research";
  spec.max_retry = 5;
  const YAML::Node job = manifest(spec);
  EXPECT_EQ(str(job["apiVersion"]), "batch.volcano.sh/v1alpha1");
  EXPECT_EQ(str(job["kind"]), "Job");
  EXPECT_EQ(str(job["metadata"]["name"]), "plumb-baseline");
  const YAML::Node s = job["spec"];
  EXPECT_EQ(str(s["schedulerName"]), "volcano");
  EXPECT_EQ(str(s["queue"]), "research");
  EXPECT_EQ(str(s["priorityClassName"]), "high-priority");
  EXPECT_EQ(s["maxRetry"].as<int>(), 5);
  // The gang: minAvailable is every replica of every task.
  int replicas = 0;
  for (const YAML::Node& t : s["tasks"]) replicas += t["replicas"].as<int>();
  EXPECT_EQ(replicas, 5);
  EXPECT_EQ(s["minAvailable"].as<int>(), replicas);
  for (const char* plugin : {"ssh", "svc", "env"}) {
    EXPECT_TRUE(s["plugins"][plugin].IsSequence()) << plugin;
  }
  EXPECT_EQ(str(s["networkTopology"]["mode"]), "hard");
  EXPECT_EQ(s["networkTopology"]["highestTierAllowed"].as<int>(), 2);
  check_volcano_policies(s["policies"]);
  EXPECT_TRUE(has_policy(s["policies"], "PodEvicted", "RestartJob"));
  EXPECT_TRUE(has_policy(s["policies"], "PodFailed", "RestartJob"));

  ASSERT_EQ(s["tasks"].size(), 2u);
  const YAML::Node master = s["tasks"][0];
  EXPECT_EQ(str(master["name"]), "mpimaster");
  EXPECT_EQ(master["replicas"].as<int>(), 1);
  check_volcano_policies(master["policies"]);
  EXPECT_TRUE(has_policy(master["policies"], "TaskCompleted", "CompleteJob"));
  const YAML::Node launcher = container(master["template"]["spec"]);
  check_env_strings(launcher);
  const std::string script = str(launcher["command"][2]);
  EXPECT_EQ(script, launcher_script(spec, "sed 's/$/ slots=8/' /etc/volcano/mpiworker.host > "
                                          "/tmp/plumb.hosts"));
  EXPECT_NE(script.find("plumb baseline --hostfile /tmp/plumb.hosts --ranks 32 || status=$?\n"),
            std::string::npos);
  EXPECT_FALSE(master["template"]["spec"]["hostNetwork"].IsDefined());

  const YAML::Node worker = s["tasks"][1];
  EXPECT_EQ(str(worker["name"]), "mpiworker");
  EXPECT_EQ(worker["replicas"].as<int>(), 4);
  check_worker_pod(worker["template"]["spec"], "nvidia.com/gpu", 8);
}

TEST(VolcanoJob, SoftTopologyNeedsNoTierAndNoneIsLeftOut) {
  JobSpec spec = four_by_eight();
  spec.network_topology = "soft";
  const YAML::Node soft = manifest(spec)["spec"]["networkTopology"];
  EXPECT_EQ(str(soft["mode"]), "soft");
  EXPECT_FALSE(soft["highestTierAllowed"].IsDefined());
  EXPECT_FALSE(manifest(four_by_eight())["spec"]["networkTopology"].IsDefined());
  EXPECT_FALSE(manifest(four_by_eight())["spec"]["priorityClassName"].IsDefined());
}

TEST(VolcanoJob, AscendAsksForItsNpusAndSeesTheDriver) {
  JobSpec spec = four_by_eight();
  spec.vendor = "ascend";
  spec.devices_per_node = 16;
  const YAML::Node pod = manifest(spec)["spec"]["tasks"][1]["template"]["spec"];
  check_worker_pod(pod, "huawei.com/Ascend910", 16);
  EXPECT_FALSE(container(pod)["resources"]["limits"]["nvidia.com/gpu"].IsDefined());
  EXPECT_EQ(str(pod["volumes"][1]["hostPath"]["path"]), "/usr/local/Ascend/driver");
  EXPECT_TRUE(container(pod)["volumeMounts"][1]["readOnly"].as<bool>());
}

TEST(VolcanoJob, PodNetworkDropsHostNetworkAndIpc) {
  JobSpec spec = four_by_eight();
  spec.pod_network = true;
  const YAML::Node pod = manifest(spec)["spec"]["tasks"][1]["template"]["spec"];
  EXPECT_FALSE(pod["hostNetwork"].IsDefined());
  EXPECT_FALSE(pod["hostIPC"].IsDefined());
  EXPECT_FALSE(pod["dnsPolicy"].IsDefined());
}

TEST(VolcanoJob, OtherCommandsRunUnderMpirun) {
  JobSpec spec = four_by_eight();
  spec.command = {"comm", "--collectives", "allreduce", "--label", "it's new"};
  const std::string script =
      str(manifest(spec)["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"][2]);
  EXPECT_NE(script.find("exec mpirun --hostfile /tmp/plumb.hosts -np 32 plumb comm --collectives "
                        "allreduce --label 'it'\\''s new'\n"),
            std::string::npos)
      << script;
  EXPECT_EQ(script.find("plumb export"), std::string::npos);
}

TEST(KueueJobSet, StructureOfFourNodesOfEight) {
  JobSpec spec = four_by_eight();
  spec.scheduler = "kueue";
  spec.queue = "team-a";
  spec.priority_class = "high";
  spec.namespace_name = "ml";
  const YAML::Node js = manifest(spec);
  EXPECT_EQ(str(js["apiVersion"]), "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(str(js["kind"]), "JobSet");
  EXPECT_EQ(str(js["metadata"]["namespace"]), "ml");
  EXPECT_EQ(str(js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]), "team-a");
  EXPECT_EQ(str(js["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]), "high");
  const YAML::Node s = js["spec"];
  EXPECT_TRUE(s["suspend"].as<bool>());
  EXPECT_TRUE(s["network"]["enableDNSHostnames"].as<bool>());
  EXPECT_EQ(str(s["successPolicy"]["operator"]), "All");
  EXPECT_EQ(str(s["successPolicy"]["targetReplicatedJobs"][0]), "launcher");
  EXPECT_EQ(s["failurePolicy"]["maxRestarts"].as<int>(), 3);
  EXPECT_EQ(str(s["failurePolicy"]["rules"][0]["action"]), "FailJobSet");
  ASSERT_EQ(s["replicatedJobs"].size(), 2u);
  int pods = 0;
  for (const YAML::Node& rj : s["replicatedJobs"]) {
    const YAML::Node job = rj["template"]["spec"];
    // Every pod at once: parallelism = completions, and no retry of a single pod.
    EXPECT_EQ(job["parallelism"].as<int>(), job["completions"].as<int>()) << str(rj["name"]);
    EXPECT_EQ(job["backoffLimit"].as<int>(), 0);
    EXPECT_EQ(str(job["template"]["spec"]["restartPolicy"]), "Never");
    pods += rj["replicas"].as<int>() * job["parallelism"].as<int>();
  }
  EXPECT_EQ(pods, 5);
  const YAML::Node launcher = s["replicatedJobs"][0];
  EXPECT_EQ(str(launcher["name"]), "launcher");
  EXPECT_EQ(launcher["template"]["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"]["values"].size(),
            2u);
  const YAML::Node lc = container(launcher["template"]["spec"]["template"]["spec"]);
  check_env_strings(lc);
  EXPECT_NE(str(lc["command"][2]).find("echo \"plumb-baseline-worker-0-$i.plumb-baseline slots=8\""),
            std::string::npos);
  const YAML::Node worker = s["replicatedJobs"][1];
  EXPECT_EQ(str(worker["name"]), "worker");
  EXPECT_EQ(worker["template"]["spec"]["parallelism"].as<int>(), 4);
  EXPECT_EQ(str(worker["template"]["spec"]["completionMode"]), "Indexed");
  const YAML::Node pod = worker["template"]["spec"]["template"]["spec"];
  check_worker_pod(pod, "nvidia.com/gpu", 8);
  EXPECT_EQ(str(pod["volumes"][1]["secret"]["secretName"]), "plumb-baseline-ssh");
  EXPECT_EQ(pod["volumes"][1]["secret"]["defaultMode"].as<int>(), 0600);
}

TEST(KueueJobSet, NoPriorityLabelUnlessGiven) {
  JobSpec spec = four_by_eight();
  spec.scheduler = "kueue";
  spec.ssh_secret = "mpi-keys";
  const YAML::Node js = manifest(spec);
  EXPECT_FALSE(js["metadata"]["labels"]["kueue.x-k8s.io/priority-class"].IsDefined());
  EXPECT_FALSE(js["metadata"]["namespace"].IsDefined());
  EXPECT_EQ(str(js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["volumes"][1]
                  ["secret"]["secretName"]),
            "mpi-keys");
}

// The shell reads every script plumb writes (sh -n: parsed, not run).
TEST(Scripts, ParseAsShell) {
  const std::string dir = test::temp_dir("k8s-scripts");
  JobSpec spec = four_by_eight();
  spec.command = {"baseline", "--label", "a \"quoted\" $label"};
  const std::string scripts[] = {launcher_script(spec, "true"), worker_script(),
                                 launcher_script(four_by_eight(), "true")};
  for (const std::string& script : scripts) {
    test::write_file(dir + "/script.sh", script);
    const test::Run r = test::run_command("/bin/sh -n " + dir + "/script.sh");
    EXPECT_EQ(r.exit_code, 0) << r.err << script;
  }
}

TEST(Scripts, ShellQuoteReadsBack) {
  EXPECT_EQ(shell_quote("--sizes=1K:1M"), "--sizes=1K:1M");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  const test::Run r = test::run_command("printf '%s|' " + shell_quote("it's $x \"y\"") + " " +
                                        shell_quote("*"));
  EXPECT_EQ(r.out, "it's $x \"y\"|*|");
}

TEST(YamlEmit, QuotesWhatWouldReadAsAnotherType) {
  for (const char* t : {"1", "0600", "-1", ".5", "true", "True", "no", "null", "~", "", "1Gi", ".inf"}) {
    EXPECT_TRUE(needs_quotes(t)) << t;
  }
  for (const char* t : {"plumb", "nvidia.com/gpu", "-p 2222", "IPC_LOCK", "Never"}) {
    EXPECT_FALSE(needs_quotes(t)) << t;
  }
}

TEST(DnsNames, LabelsAndSubdomains) {
  EXPECT_TRUE(is_dns_label("plumb-baseline"));
  EXPECT_TRUE(is_dns_label("a"));
  EXPECT_TRUE(is_dns_label(std::string(63, 'a')));
  EXPECT_FALSE(is_dns_label(std::string(64, 'a')));
  for (const char* bad : {"", "-a", "a-", "A", "a_b", "a.b"}) EXPECT_FALSE(is_dns_label(bad)) << bad;
  EXPECT_TRUE(is_dns_subdomain("system-node-critical"));
  EXPECT_TRUE(is_dns_subdomain("a.b-c"));
  for (const char* bad : {"", "a..b", ".a", "a.", "A.b"}) EXPECT_FALSE(is_dns_subdomain(bad)) << bad;
}

std::string message(const JobSpec& spec) {
  return test::error_message([&] { job_manifest(spec); });
}

TEST(JobManifestErrors, UnknownScheduler) {
  JobSpec spec = four_by_eight();
  spec.scheduler = "volcanoo";
  EXPECT_EQ(message(spec), "--scheduler: unknown scheduler 'volcanoo' (did you mean 'volcano'?); "
                           "expected one of volcano, kueue, kai");
}

TEST(JobManifestErrors, CountsOutOfRange) {
  JobSpec spec;
  spec.nodes = 0;
  spec.devices_per_node = 17;
  spec.max_retry = -1;
  EXPECT_EQ(message(spec), "--nodes must be from 1 to 65536, got 0\n"
                           "--devices-per-node must be from 1 to 16, got 17\n"
                           "--max-retry must be from 0 to 100, got -1");
  spec.nodes = 8192;
  spec.devices_per_node = 16;
  spec.max_retry = 3;
  EXPECT_EQ(message(spec), "--nodes 8192 × --devices-per-node 16 is 131072 ranks; plumb runs at "
                           "most 65536");
}

TEST(JobManifestErrors, NamesKubernetesRefuses) {
  JobSpec spec = four_by_eight();
  spec.name = "Plumb_1";
  spec.namespace_name = "-ml";
  spec.queue = "";
  spec.priority_class = "high..p";
  spec.image = "my image";
  spec.vendor = "nvidai";
  EXPECT_EQ(message(spec),
            "--vendor: unknown vendor 'nvidai' (did you mean 'nvidia'?); expected one of nvidia, "
            "ascend\n"
            "--image 'my image': name an image every node can pull, e.g. "
            "registry.example.com/plumb:1.0\n"
            "--name 'Plumb_1': not a DNS label (RFC 1123): 1 to 63 of a-z, 0-9 and '-', beginning "
            "and ending with a letter or digit\n"
            "--namespace '-ml': not a DNS label (RFC 1123): 1 to 63 of a-z, 0-9 and '-', "
            "beginning and ending with a letter or digit\n"
            "--queue '': not a DNS label (RFC 1123): 1 to 63 of a-z, 0-9 and '-', beginning and "
            "ending with a letter or digit\n"
            "--priority-class 'high..p': not a DNS subdomain (RFC 1123): labels of a-z, 0-9 and "
            "'-' joined by '.', at most 253 characters");
}

TEST(JobManifestErrors, HostNamesTooLong) {
  JobSpec spec = four_by_eight();
  spec.nodes = 1000;
  spec.name = std::string(50, 'p');
  EXPECT_EQ(message(spec), "--name '" + spec.name + "': the last worker's host name " + spec.name +
                               "-mpiworker-999 would be 64 characters; a host name has at most 63");
  spec.name = std::string(49, 'p');
  EXPECT_EQ(message(spec), "(no error)");
}

TEST(JobManifestErrors, NetworkTopology) {
  JobSpec spec = four_by_eight();
  spec.network_topology = "strict";
  spec.highest_tier = 17;
  EXPECT_EQ(message(spec), "--network-topology: unknown mode 'strict'; expected one of hard, soft\n"
                           "--highest-tier must be from 1 to 16, got 17");
  spec.network_topology = "hard";
  spec.highest_tier.reset();
  EXPECT_EQ(message(spec), "--network-topology hard needs --highest-tier: the highest HyperNode "
                           "tier the job may span");
  spec.network_topology.clear();
  spec.highest_tier = 2;
  EXPECT_EQ(message(spec), "--highest-tier needs --network-topology hard or soft");
  spec.network_topology = "hard";
  spec.scheduler = "kueue";
  EXPECT_EQ(message(spec), "--network-topology is Volcano's (HyperNode tiers); --scheduler kueue "
                           "has no such constraint: leave it out");
}

TEST(JobManifestErrors, OptionsPlumbGivesItself) {
  JobSpec spec = four_by_eight();
  spec.command = {"baseline", "--ranks=8", "--quick", "-n4"};
  EXPECT_EQ(message(spec),
            "-- baseline --ranks=8: plumb k8s job gives plumb baseline --ranks (--nodes × "
            "--devices-per-node) and --hostfile (the workers) itself\n"
            "-- baseline -n4: plumb k8s job gives plumb baseline --ranks (--nodes × "
            "--devices-per-node) and --hostfile (the workers) itself");
  spec.command = {"comm", "-n", "4"};  // not baseline's: passed on as given
  EXPECT_EQ(message(spec), "(no error)");
  spec.ssh_secret = "keys";
  EXPECT_EQ(message(spec), "--ssh-secret is for --scheduler kueue or --launcher ray; --scheduler "
                           "volcano makes the keys itself (the ssh plugin)");
}

TEST(JobManifestErrors, NoRetryIsKueuesOnly) {
  JobSpec spec = four_by_eight();
  spec.max_retry = 0;
  EXPECT_EQ(message(spec), "--max-retry 0: a volcano Job takes maxRetry 0 as unset, its default 3; "
                           "give 1 to 100");
  spec.scheduler = "kueue";
  EXPECT_EQ(manifest(spec)["spec"]["failurePolicy"]["maxRestarts"].as<int>(), 0);
}

// Golden files: the whole text of one Volcano Job and one JobSet. Rewrite them after a deliberate
// change with: plumb k8s job --nodes 4 --devices-per-node 8 [...] -o tests/fixtures/k8s/<file>.
TEST(JobManifestGolden, VolcanoFourByEight) {
  JobSpec spec = four_by_eight();
  spec.network_topology = "hard";
  spec.highest_tier = 2;
  spec.command = {"baseline", "--quick"};
  EXPECT_EQ(job_manifest(spec),
            test::read_file(PLUMB_TEST_FIXTURES "/k8s/volcano-4x8-hard-tier2-quick.yaml"));
}

TEST(JobManifestGolden, KueueTwoByEightAscend) {
  JobSpec spec;
  spec.nodes = 2;
  spec.devices_per_node = 8;
  spec.vendor = "ascend";
  spec.scheduler = "kueue";
  spec.queue = "team-a";
  EXPECT_EQ(job_manifest(spec), test::read_file(PLUMB_TEST_FIXTURES "/k8s/kueue-2x8-ascend.yaml"));
}

}  // namespace
}  // namespace plumb::k8s
