// plumb k8s job --launcher ray: a KubeRay RayJob (or RayCluster) and the ConfigMap with the head's
// script, for each gang scheduler. A structural check parses the YAML back and holds it against
// what KubeRay and the schedulers read (docs/k8s.md, Ray on Kubernetes): the scheduler's labels,
// the gang (head + minReplicas = every pod, minReplicas <= replicas <= maxReplicas), no in-tree
// autoscaling, the devices on the workers only, one image everywhere. Golden files pin the text.
#include <yaml-cpp/yaml.h>

#include <gtest/gtest.h>

#include "common/json.h"
#include "k8s/job_spec.h"
#include "k8s/pod_template.h"
#include "k8s/ray_job.h"
#include "k8s/schedulers.h"
#include "support/subprocess.h"

namespace plumb::k8s {
namespace {

JobSpec ray_spec(const std::string& scheduler) {
  JobSpec s;
  s.nodes = 4;
  s.devices_per_node = 8;
  s.launcher = "ray";
  s.scheduler = scheduler;
  return s;
}

std::vector<YAML::Node> documents(const JobSpec& spec) { return YAML::LoadAll(job_manifest(spec)); }

std::string str(const YAML::Node& n) { return n.as<std::string>(); }

YAML::Node container(const YAML::Node& group) {
  const YAML::Node pod = group["template"]["spec"];
  EXPECT_EQ(pod["containers"].size(), 1u);
  return pod["containers"][0];
}

// The cluster's spec (a RayCluster's spec, a RayJob's rayClusterSpec) as KubeRay and the gang
// schedulers read it, for `spec`; `config_map` is the ConfigMap document's name.
void check_cluster(const YAML::Node& c, const JobSpec& spec, const std::string& config_map) {
  EXPECT_FALSE(c["enableInTreeAutoscaling"].as<bool>());
  const YAML::Node head = c["headGroupSpec"];
  ASSERT_EQ(c["workerGroupSpecs"].size(), 1u);
  const YAML::Node workers = c["workerGroupSpecs"][0];
  const int least = workers["minReplicas"].as<int>();
  const int replicas = workers["replicas"].as<int>();
  EXPECT_LE(least, replicas);
  EXPECT_LE(replicas, workers["maxReplicas"].as<int>());
  // The gang KubeRay asks for is the head + minReplicas (autoscaling off: + replicas); both are
  // every pod, the N nodes plumb's ranks run on.
  EXPECT_EQ(least, spec.nodes);
  EXPECT_EQ(replicas, spec.nodes);
  const std::string resource = vendor(spec.vendor).resource;
  const YAML::Node hc = container(head);
  const YAML::Node wc = container(workers);
  EXPECT_EQ(wc["resources"]["limits"][resource].as<int>(), spec.devices_per_node);
  EXPECT_FALSE(hc["resources"]["limits"].IsDefined()) << "no devices on the head";
  EXPECT_EQ(str(hc["image"]), spec.image);
  EXPECT_EQ(str(wc["image"]), spec.image);
  // KubeRay writes the containers' command (ray start): none is given.
  EXPECT_FALSE(hc["command"].IsDefined());
  EXPECT_FALSE(wc["command"].IsDefined());
  EXPECT_EQ(str(wc["lifecycle"]["postStart"]["exec"]["command"][2]), ray_worker_sshd());
  EXPECT_EQ(str(head["template"]["spec"]["volumes"][2]["configMap"]["name"]), config_map);
  EXPECT_EQ(str(hc["volumeMounts"][2]["mountPath"]), kRunDir);
  EXPECT_EQ(str(head["rayStartParams"]["num-cpus"]), "0");
  // ray start --resources takes a JSON object; KubeRay passes the value on as it is, quoted.
  std::string resources = str(workers["rayStartParams"]["resources"]);
  ASSERT_GE(resources.size(), 2u);
  EXPECT_EQ(resources.front(), '"');
  EXPECT_EQ(resources.back(), '"');
  resources = resources.substr(1, resources.size() - 2);
  std::string unescaped;
  for (char ch : resources) {
    if (ch != '\\') unescaped += ch;
  }
  EXPECT_EQ(parse_json(unescaped, "rayStartParams.resources")[kRayWorkerResource].get<int>(), 1);
  const YAML::Node wpod = workers["template"]["spec"];
  EXPECT_TRUE(wpod["hostNetwork"].as<bool>());
  EXPECT_EQ(str(wpod["dnsPolicy"]), "ClusterFirstWithHostNet");
  EXPECT_FALSE(wpod["restartPolicy"].IsDefined());
}

void check_config_map(const YAML::Node& cm, const JobSpec& spec) {
  EXPECT_EQ(str(cm["apiVersion"]), "v1");
  EXPECT_EQ(str(cm["kind"]), "ConfigMap");
  EXPECT_EQ(str(cm["metadata"]["name"]), spec.name + "-run");
  EXPECT_EQ(str(cm["data"]["run.sh"]), ray_head_script(spec));
}

TEST(RayJob, VolcanoGangsHeadAndWorkers) {
  JobSpec spec = ray_spec("volcano");
  spec.queue = "research";
  spec.priority_class = "high";
  spec.max_retry = 2;
  const std::vector<YAML::Node> docs = documents(spec);
  ASSERT_EQ(docs.size(), 2u);
  check_config_map(docs[0], spec);
  const YAML::Node job = docs[1];
  EXPECT_EQ(str(job["apiVersion"]), "ray.io/v1");
  EXPECT_EQ(str(job["kind"]), "RayJob");
  const YAML::Node labels = job["metadata"]["labels"];
  EXPECT_EQ(str(labels["ray.io/scheduler-name"]), "volcano");
  EXPECT_EQ(str(labels["volcano.sh/queue-name"]), "research");
  EXPECT_EQ(str(labels["ray.io/priority-class-name"]), "high");
  const YAML::Node s = job["spec"];
  EXPECT_EQ(str(s["entrypoint"]), "sh /etc/plumb/run.sh");
  EXPECT_TRUE(s["shutdownAfterJobFinishes"].as<bool>());
  EXPECT_EQ(s["backoffLimit"].as<int>(), 2);
  EXPECT_FALSE(s["suspend"].IsDefined());
  check_cluster(s["rayClusterSpec"], spec, spec.name + "-run");
  EXPECT_FALSE(s["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["priorityClassName"].IsDefined());
}

TEST(RayJob, KueueAdmitsByItsQueueLabel) {
  JobSpec spec = ray_spec("kueue");
  spec.queue = "team-a";
  spec.priority_class = "prod";
  spec.namespace_name = "ml";
  const std::vector<YAML::Node> docs = documents(spec);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(str(docs[0]["metadata"]["namespace"]), "ml");
  const YAML::Node job = docs[1];
  EXPECT_EQ(str(job["metadata"]["namespace"]), "ml");
  const YAML::Node labels = job["metadata"]["labels"];
  EXPECT_EQ(str(labels["kueue.x-k8s.io/queue-name"]), "team-a");
  EXPECT_EQ(str(labels["kueue.x-k8s.io/priority-class"]), "prod");
  EXPECT_FALSE(labels["ray.io/scheduler-name"].IsDefined());
  // Kueue suspends the RayJob itself and admits none that keeps its cluster or autoscales.
  EXPECT_FALSE(job["spec"]["suspend"].IsDefined());
  EXPECT_TRUE(job["spec"]["shutdownAfterJobFinishes"].as<bool>());
  check_cluster(job["spec"]["rayClusterSpec"], spec, "plumb-baseline-run");
}

TEST(RayJob, KaiClusterCarriesTheQueueLabelAndPodPriority) {
  JobSpec spec = ray_spec("kai");
  spec.ray_kind = "cluster";
  spec.queue = "team-a";
  spec.priority_class = "train";
  spec.vendor = "ascend";
  spec.image = "registry.example.com/plumb-ray:1.0";
  const std::vector<YAML::Node> docs = documents(spec);
  ASSERT_EQ(docs.size(), 2u);
  const YAML::Node cluster = docs[1];
  EXPECT_EQ(str(cluster["kind"]), "RayCluster");
  EXPECT_EQ(str(cluster["metadata"]["labels"]["kai.scheduler/queue"]), "team-a");
  EXPECT_FALSE(cluster["metadata"]["labels"]["ray.io/scheduler-name"].IsDefined());
  const YAML::Node s = cluster["spec"];
  EXPECT_FALSE(s["entrypoint"].IsDefined());
  EXPECT_FALSE(s["shutdownAfterJobFinishes"].IsDefined());
  check_cluster(s, spec, "plumb-baseline-run");
  EXPECT_EQ(str(s["headGroupSpec"]["template"]["spec"]["priorityClassName"]), "train");
  EXPECT_EQ(str(s["workerGroupSpecs"][0]["template"]["spec"]["priorityClassName"]), "train");
}

// The head's script: sh reads it, and the Python that writes the hostfile runs.
TEST(RayJob, HeadScriptParsesAndWritesTheHostfile) {
  const std::string dir = test::temp_dir("k8s-ray");
  JobSpec spec = ray_spec("volcano");
  spec.command = {"baseline", "--label", "it's \"ray\""};
  const std::string script = ray_head_script(spec);
  test::write_file(dir + "/run.sh", script);
  test::Run r = test::run_command("/bin/sh -n " + dir + "/run.sh");
  EXPECT_EQ(r.exit_code, 0) << r.err << script;
  const size_t begin = script.find("<<'PY'\n");
  const size_t end = script.find("\nPY\n");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  EXPECT_NE(script.find("if len(hosts) >= 4:"), std::string::npos);
  EXPECT_NE(script.find("slots=8\\n"), std::string::npos);
  EXPECT_NE(script.find("plumb baseline --hostfile /tmp/plumb.hosts --ranks 32 --label "
                        "'it'\\''s \"ray\"' || status=$?\n"),
            std::string::npos)
      << script;
  // Run against a stand-in for Ray's node table: the head (no plumb_worker), a worker that died,
  // four alive; the hostfile names the four, sorted, with D slots each.
  std::string python = script.substr(begin + 7, end - begin - 7);
  const std::string hosts = dir + "/plumb.hosts";
  python.replace(python.find(kHostfile), std::string(kHostfile).size(), hosts);
  test::write_file(dir + "/hosts.py", python);
  test::write_file(dir + "/ray.py",
                   "def init(**kwargs): pass\n"
                   "def nodes():\n"
                   "    w = {'plumb_worker': 1.0, 'GPU': 8.0}\n"
                   "    return [{'Alive': True, 'NodeManagerAddress': '10.0.0.1', 'Resources': {}}]"
                   " + [{'Alive': True, 'NodeManagerAddress': '10.0.1.%d' % i, 'Resources': w}"
                   " for i in (4, 2, 3, 1)]"
                   " + [{'Alive': False, 'NodeManagerAddress': '10.0.1.9', 'Resources': w}]\n");
  r = test::run_command("cd " + dir + " && python3 hosts.py");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::read_file(hosts),
            "10.0.1.1 slots=8\n10.0.1.2 slots=8\n10.0.1.3 slots=8\n10.0.1.4 slots=8\n");
  test::write_file(dir + "/sshd.sh", ray_worker_sshd());
  EXPECT_EQ(test::run_command("/bin/sh -n " + dir + "/sshd.sh").exit_code, 0);
}

std::string message(const JobSpec& spec) {
  return test::error_message([&] { job_manifest(spec); });
}

TEST(RayJobErrors, ImpossibleCombinations) {
  JobSpec spec = ray_spec("kai");
  spec.launcher = "mpi";
  EXPECT_EQ(message(spec), "--scheduler kai gangs KubeRay objects here: give --launcher ray (plumb "
                           "writes no MPI job for it)");
  spec.scheduler = "volcano";
  spec.ray_kind = "cluster";
  EXPECT_EQ(message(spec), "--ray-kind is for --launcher ray");
  spec.launcher = "rey";
  EXPECT_EQ(message(spec), "--launcher: unknown launcher 'rey' (did you mean 'ray'?); expected one "
                           "of mpi, ray");
  spec.launcher = "ray";
  spec.ray_kind = "service";
  spec.network_topology = "hard";
  spec.highest_tier = 2;
  EXPECT_EQ(message(spec), "--ray-kind: unknown kind 'service'; expected one of job, cluster\n"
                           "--network-topology is for --launcher mpi under Volcano: KubeRay makes "
                           "the PodGroup itself and sets no network topology on it");
}

TEST(RayJobErrors, NamesKubeRayRefuses) {
  JobSpec spec = ray_spec("volcano");
  spec.name = std::string(48, 'r');
  EXPECT_EQ(message(spec), "--name '" + spec.name + "': KubeRay takes a RayJob name of at most 47 "
                           "characters beginning with a letter");
  spec.ray_kind = "cluster";
  EXPECT_EQ(message(spec), "(no error)");
  spec.name = "1st";
  EXPECT_EQ(message(spec), "--name '1st': KubeRay takes a RayCluster name of at most 53 characters "
                           "beginning with a letter");
}

TEST(RayJobErrors, WhatTheMpiLauncherRefusesRayTakes) {
  JobSpec spec = ray_spec("volcano");
  spec.ssh_secret = "keys";  // no Volcano ssh plugin for KubeRay's pods
  spec.max_retry = 0;        // a RayJob's backoffLimit 0: no retry
  spec.name = std::string(47, 'r');
  EXPECT_EQ(message(spec), "(no error)");
  const YAML::Node job = documents(spec)[1];
  EXPECT_EQ(job["spec"]["backoffLimit"].as<int>(), 0);
  EXPECT_EQ(str(job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["volumes"][1]
                   ["secret"]["secretName"]),
            "keys");
}

// Golden files: one per scheduler. Rewrite after a deliberate change with
// plumb k8s job --launcher ray [...] -o tests/fixtures/k8s/<file>.
TEST(RayJobGolden, VolcanoFourByEight) {
  JobSpec spec = ray_spec("volcano");
  spec.command = {"baseline", "--quick"};
  EXPECT_EQ(job_manifest(spec), test::read_file(PLUMB_TEST_FIXTURES "/k8s/ray-volcano-4x8-quick.yaml"));
}

TEST(RayJobGolden, KueueTwoByEightAscend) {
  JobSpec spec = ray_spec("kueue");
  spec.nodes = 2;
  spec.vendor = "ascend";
  spec.queue = "team-a";
  EXPECT_EQ(job_manifest(spec), test::read_file(PLUMB_TEST_FIXTURES "/k8s/ray-kueue-2x8-ascend.yaml"));
}

TEST(RayJobGolden, KaiClusterTwoByEight) {
  JobSpec spec = ray_spec("kai");
  spec.nodes = 2;
  spec.ray_kind = "cluster";
  spec.queue = "team-a";
  EXPECT_EQ(job_manifest(spec), test::read_file(PLUMB_TEST_FIXTURES "/k8s/ray-kai-2x8-cluster.yaml"));
}

}  // namespace
}  // namespace plumb::k8s
