// plumb check node --slurm: scontrol and sinfo outputs recorded on a real Slurm 22.05 (scripts/
// slurm-local; tests/fixtures/check/slurm/SOURCES.md), the reason text, the partition guard, and
// every branch of what the pass does to the node, through a scripted scontrol/sinfo.
#include "check/slurm_drain.h"

#include <gtest/gtest.h>

#include "support/subprocess.h"

namespace plumb::check {
namespace {

std::string fixture(const std::string& name) {
  return test::read_file(std::string(PLUMB_SOURCE_DIR) + "/tests/fixtures/check/slurm/" + name);
}

SlurmNode parsed(const std::string& name) {
  std::string problem;
  const std::optional<SlurmNode> node = parse_scontrol_node(fixture(name), "vm", problem);
  EXPECT_TRUE(node.has_value()) << problem;
  return node.value_or(SlurmNode{});
}

CheckResult result(const std::string& name, Status status, const std::string& value) {
  CheckResult r;
  r.name = name;
  r.status = status;
  r.value = value;
  return r;
}

NodeReport report_of(std::vector<CheckResult> checks) {
  NodeReport r;
  r.host = "vm";
  r.checks = std::move(checks);
  return r;
}

NodeReport failing() {
  return report_of({result("accel.count", Status::kOk, "8 devices"),
                    result("pcie.link", Status::kCritical, "mlx5_0 at x8")});
}

NodeReport passing() {
  return report_of({result("accel.count", Status::kOk, "8 devices"),
                    result("pcie.link", Status::kOk, "x16")});
}

TEST(SlurmShowNode, ReadsAnIdleNode) {
  const SlurmNode node = parsed("show-node-idle.txt");
  EXPECT_EQ(node.state, (std::vector<std::string>{"IDLE", "NOT_RESPONDING"}));
  EXPECT_EQ(node.partitions, std::vector<std::string>{"debug"});
  EXPECT_EQ(node.reason, "");
  EXPECT_FALSE(node.drained());
}

TEST(SlurmShowNode, ReadsTheReasonPlumbSetWithoutWhoSetItAndWhen) {
  const SlurmNode node = parsed("show-node-drained-plumb.txt");
  EXPECT_EQ(node.reason, "plumb: pcie.link: mlx5_0 at x8");
  EXPECT_TRUE(node.drained());
  EXPECT_TRUE(node.drained_by_plumb());
}

TEST(SlurmShowNode, ANodeDrainedByHandIsNotPlumbs) {
  const SlurmNode node = parsed("show-node-drained-by-hand.txt");
  EXPECT_EQ(node.reason, "disk replaced, burn-in pending (ticket 4411)");
  EXPECT_EQ(node.state, (std::vector<std::string>{"IDLE", "DRAIN", "NOT_RESPONDING"}));
  EXPECT_TRUE(node.drained());
  EXPECT_FALSE(node.drained_by_plumb());
}

TEST(SlurmShowNode, ADrainingNodeWithJobsIsDrained) {
  const SlurmNode node = parsed("show-node-draining.txt");
  EXPECT_EQ(node.state, (std::vector<std::string>{"MIXED", "DRAIN"}));
  EXPECT_TRUE(node.drained_by_plumb());
}

TEST(SlurmShowNode, AnUnknownNodeIsAProblemNamingIt) {
  std::string problem;
  EXPECT_FALSE(parse_scontrol_node(fixture("show-node-unknown.txt"), "nosuchnode", problem));
  EXPECT_EQ(problem, "scontrol does not know node nosuchnode: Node nosuchnode not found");
  EXPECT_FALSE(parse_scontrol_node(fixture("show-node-idle.txt"), "vm2", problem));
  EXPECT_EQ(problem,
            "scontrol does not know node vm2: NodeName=vm Arch=x86_64 CoresPerSocket=2 "
            "CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=1.29 AvailableFea...");
  EXPECT_FALSE(parse_scontrol_node("", "vm", problem));
  EXPECT_EQ(problem, "scontrol printed nothing for node vm");
}

TEST(SlurmShowNode, AReasonHoldingStateWordsDoesNotChangeTheState) {
  const std::string text =
      "NodeName=n1 Arch=x86_64\n   State=IDLE ThreadsPerCore=1\n   Partitions=gpu,debug \n"
      "   Reason=State=DRAIN Partitions=x [admin@2026-12-07T00:01:18]\n";
  std::string problem;
  const std::optional<SlurmNode> node = parse_scontrol_node(text, "n1", problem);
  ASSERT_TRUE(node) << problem;
  EXPECT_EQ(node->state, std::vector<std::string>{"IDLE"});
  EXPECT_EQ(node->partitions, (std::vector<std::string>{"gpu", "debug"}));
  EXPECT_EQ(node->reason, "State=DRAIN Partitions=x");
}

TEST(SlurmSinfo, CountsDrainedAndDrainingNodesPerPartition) {
  EXPECT_EQ(parse_sinfo_partitions(fixture("sinfo-idle.txt"))[0].drained, 0);
  EXPECT_EQ(parse_sinfo_partitions(fixture("sinfo-drained.txt"))[0].drained, 1);
  const std::vector<PartitionLoad> loads = parse_sinfo_partitions(fixture("sinfo-draining.txt"));
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(loads[0].partition, "debug");
  EXPECT_EQ(loads[0].nodes, 1);
  EXPECT_EQ(loads[0].drained, 1);
}

TEST(SlurmSinfo, ReadsSeveralPartitionsAndTheStatesFlagMarks) {
  const std::vector<PartitionLoad> loads =
      parse_sinfo_partitions(fixture("sinfo-two-partitions.txt"));
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0].partition, "gpu");
  EXPECT_EQ(loads[0].nodes, 10);
  EXPECT_EQ(loads[0].drained, 1);
  EXPECT_EQ(loads[1].partition, "debug");
  EXPECT_EQ(loads[1].nodes, 3);
  EXPECT_EQ(loads[1].drained, 2);
}

TEST(SlurmGuard, RefusesTheDrainThatWouldPassTheFraction) {
  EXPECT_FALSE(drain_refusal({{"gpu", 20, 1}}, 0.1));  // 2 of 20: 10%
  EXPECT_EQ(drain_refusal({{"gpu", 20, 1}, {"debug", 3, 0}}, 0.1),
            "partition debug would have 1 of 3 nodes drained (33%), over --max-drain-fraction 0.1");
  EXPECT_EQ(drain_refusal({{"gpu", 20, 2}}, 0.1),
            "partition gpu would have 3 of 20 nodes drained (15%), over --max-drain-fraction 0.1");
  EXPECT_FALSE(drain_refusal({{"debug", 1, 0}}, 1.0));
  EXPECT_TRUE(drain_refusal({{"debug", 100, 0}}, 0.0));
}

TEST(SlurmReason, NamesTheWorstCheckAndItsValue) {
  EXPECT_EQ(slurm_drain_reason(failing()), "plumb: pcie.link: mlx5_0 at x8");
  NodeReport two = failing();
  two.checks.push_back(result("net.port", Status::kCritical, "ib0 down"));
  two.checks.push_back(result("host.irqbalance", Status::kWarning, "running"));
  EXPECT_EQ(slurm_drain_reason(two), "plumb: pcie.link: mlx5_0 at x8 (+1 more)");
}

TEST(SlurmReason, IsOneLineCutAtAWholeCharacter) {
  NodeReport r = report_of({result("version.env", Status::kCritical,
                                   "NCCL_IB_HCA=mlx5\nHCCL_ALGO=" + std::string(200, 'x'))});
  r.checks.push_back(result("accel.temperature", Status::kCritical, "95 °C"));
  const std::string reason = slurm_drain_reason(r);
  EXPECT_EQ(reason.size(), kSlurmReasonMaxBytes);
  EXPECT_EQ(reason.find('\n'), std::string::npos);
  EXPECT_EQ(reason.substr(0, 46), "plumb: version.env: NCCL_IB_HCA=mlx5 HCCL_ALGO");
  EXPECT_EQ(reason.substr(reason.size() - 15), "xx... (+1 more)");
}

TEST(SlurmNodeName, FlagThenSlurmdsNameThenTheShortHostName) {
  EXPECT_EQ(slurm_node_name("gpu7", "node7", "node7.cluster"), "gpu7");
  EXPECT_EQ(slurm_node_name("", "node7", "h.cluster"), "node7");
  EXPECT_EQ(slurm_node_name("", nullptr, "node7.cluster.example"), "node7");
  EXPECT_EQ(slurm_node_name("", "", "node7"), "node7");
}

// A scontrol and sinfo that answer from fixtures and record what they were asked.
struct ScriptedSlurm {
  std::string show = fixture("show-node-idle.txt");
  std::string sinfo = "vm debug* idle\nvm2 debug* idle\nvm3 debug* idle\n";
  ToolRun::State update_state = ToolRun::State::kDone;
  int update_exit = 0;
  std::vector<std::string> calls;

  SlurmRunner runner() {
    return [this](const std::vector<std::string>& argv) {
      std::string call;
      for (const std::string& a : argv) call += (call.empty() ? "" : " ") + a;
      calls.push_back(call);
      ToolRun r;
      r.tool = argv[0];
      r.state = ToolRun::State::kDone;
      r.exit_code = 0;
      r.timeout_s = 10;
      if (argv[0] == "sinfo") r.output = sinfo;
      if (argv.size() > 1 && argv[1] == "show") r.output = show;
      if (argv.size() > 1 && argv[1] == "update") {
        r.state = update_state;
        r.exit_code = update_exit;
      }
      return r;
    };
  }
};

SlurmOptions options(double fraction = 1.0) {
  SlurmOptions o;
  o.node = "vm";
  o.max_drain_fraction = fraction;
  return o;
}

TEST(SlurmAct, DrainsAFailingNodeWithThePlumbReason) {
  ScriptedSlurm slurm;
  const SlurmOutcome out = act_on_slurm(failing(), options(), slurm.runner());
  EXPECT_EQ(out.lines,
            std::vector<std::string>{"plumb check: drained vm: plumb: pcie.link: mlx5_0 at x8"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(slurm.calls,
            (std::vector<std::string>{
                "scontrol show node vm", "sinfo -h -N -p debug -o %N %P %T",
                "scontrol update NodeName=vm State=DRAIN Reason=plumb: pcie.link: mlx5_0 at x8"}));
}

TEST(SlurmAct, ResumesANodePlumbDrainedOnceItPasses) {
  ScriptedSlurm slurm;
  slurm.show = fixture("show-node-drained-plumb.txt");
  const SlurmOutcome out = act_on_slurm(passing(), options(), slurm.runner());
  EXPECT_EQ(out.lines, std::vector<std::string>{
                           "plumb check: resumed vm: it passes now (plumb had drained it: plumb: "
                           "pcie.link: mlx5_0 at x8)"});
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(slurm.calls.back(), "scontrol update NodeName=vm State=RESUME");
}

TEST(SlurmAct, ResumesOnlyWhenTheCheckItWasDrainedForRanAgain) {
  ScriptedSlurm slurm;
  slurm.show = fixture("show-node-drained-plumb.txt");  // drained for pcie.link
  CheckResult not_here = result("pcie.link", Status::kOk, "");
  not_here.skipped = true;
  const NodeReport other = report_of({result("accel.count", Status::kOk, "8 devices"), not_here});
  const SlurmOutcome out = act_on_slurm(other, options(), slurm.runner());
  EXPECT_EQ(out.lines, std::vector<std::string>{
                           "plumb check: vm passes but stays drained: pcie.link, the check it was "
                           "drained for, did not run (plumb: pcie.link: mlx5_0 at x8)"});
  EXPECT_EQ(slurm.calls.size(), 1u);
}

TEST(SlurmAct, NeverResumesANodeDrainedByHand) {
  ScriptedSlurm slurm;
  slurm.show = fixture("show-node-drained-by-hand.txt");
  const SlurmOutcome out = act_on_slurm(passing(), options(), slurm.runner());
  EXPECT_EQ(out.lines, std::vector<std::string>{
                           "plumb check: vm passes but stays drained: its reason 'disk replaced, "
                           "burn-in pending (ticket 4411)' was not set by plumb"});
  EXPECT_EQ(slurm.calls, std::vector<std::string>{"scontrol show node vm"});
}

TEST(SlurmAct, LeavesTheReasonOfANodeDrainedByHandWhenItFails) {
  ScriptedSlurm slurm;
  slurm.show = fixture("show-node-drained-by-hand.txt");
  const SlurmOutcome out = act_on_slurm(failing(), options(), slurm.runner());
  EXPECT_EQ(out.lines,
            std::vector<std::string>{
                "plumb check: vm fails (plumb: pcie.link: mlx5_0 at x8) and stays drained "
                "as it was, for 'disk replaced, burn-in pending (ticket 4411)' (not set "
                "by plumb)"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(slurm.calls.size(), 1u);
}

TEST(SlurmAct, KeepsOrRenewsItsOwnReasonOnANodeStillFailing) {
  ScriptedSlurm slurm;
  slurm.show = fixture("show-node-drained-plumb.txt");
  EXPECT_EQ(
      act_on_slurm(failing(), options(), slurm.runner()).lines,
      std::vector<std::string>{"plumb check: vm stays drained: plumb: pcie.link: mlx5_0 at x8"});
  EXPECT_EQ(slurm.calls.size(), 1u);
  const NodeReport other = report_of({result("accel.count", Status::kCritical, "7 devices")});
  EXPECT_EQ(act_on_slurm(other, options(), slurm.runner()).lines,
            std::vector<std::string>{
                "plumb check: vm stays drained, its reason now: plumb: accel.count: 7 devices"});
  EXPECT_EQ(slurm.calls.back(),
            "scontrol update NodeName=vm State=DRAIN Reason=plumb: accel.count: 7 devices");
}

TEST(SlurmAct, DoesNotDrainPastTheFractionAndExitsCritical) {
  ScriptedSlurm slurm;
  slurm.sinfo = fixture("sinfo-two-partitions.txt");
  slurm.show =
      "NodeName=vm Arch=x86_64\n   State=IDLE ThreadsPerCore=1\n   Partitions=gpu,debug \n";
  SlurmOptions o = options(0.1);
  o.drain_on = Status::kWarning;
  const NodeReport warned = report_of({result("host.irqbalance", Status::kWarning, "running")});
  const SlurmOutcome out = act_on_slurm(warned, o, slurm.runner());
  EXPECT_EQ(out.lines, std::vector<std::string>{
                           "plumb check: did not drain vm (plumb: host.irqbalance: running): "
                           "partition gpu would have 2 of 10 nodes drained (20%), over "
                           "--max-drain-fraction 0.1; drain it by hand if it must go"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(slurm.calls[1], "sinfo -h -N -p gpu,debug -o %N %P %T");
  EXPECT_EQ(slurm.calls.size(), 2u);
}

TEST(SlurmAct, AWarningDoesNotDrainByDefault) {
  ScriptedSlurm slurm;
  const NodeReport warned = report_of({result("host.irqbalance", Status::kWarning, "running")});
  const SlurmOutcome out = act_on_slurm(warned, options(), slurm.runner());
  EXPECT_EQ(out.lines,
            std::vector<std::string>{"plumb check: vm passes; not drained, nothing to do"});
  EXPECT_EQ(out.exit_code, 1);
}

TEST(SlurmAct, ACheckThatCouldNotBeJudgedChangesNothing) {
  ScriptedSlurm slurm;
  slurm.show = fixture("show-node-drained-plumb.txt");
  NodeReport r = passing();
  r.checks.push_back(result("accel.health", Status::kUnknown, ""));
  const SlurmOutcome out = act_on_slurm(r, options(), slurm.runner());
  EXPECT_EQ(out.lines,
            std::vector<std::string>{
                "plumb check: vm left as it is (drained): could not judge accel.health"});
  EXPECT_EQ(out.exit_code, 3);
  EXPECT_EQ(slurm.calls.size(), 1u);
}

TEST(SlurmAct, SaysWhenSlurmCannotBeAskedOrDoesNotObey) {
  ScriptedSlurm slurm;
  slurm.show = fixture("show-node-unknown.txt");
  SlurmOptions o = options();
  o.node = "nosuchnode";
  SlurmOutcome out = act_on_slurm(failing(), o, slurm.runner());
  EXPECT_EQ(out.lines, std::vector<std::string>{
                           "plumb check: could not read the state of nosuchnode: scontrol does not "
                           "know node nosuchnode: Node nosuchnode not found"});
  EXPECT_EQ(out.exit_code, 2);
  ScriptedSlurm refusing;
  refusing.update_exit = 1;
  out = act_on_slurm(failing(), options(), refusing.runner());
  EXPECT_EQ(out.lines,
            std::vector<std::string>{"plumb check: could not drain vm: scontrol: exit status 1"});
  ScriptedSlurm hung;
  hung.update_state = ToolRun::State::kTimedOut;
  out = act_on_slurm(passing(), options(), hung.runner());
  EXPECT_EQ(out.lines,
            std::vector<std::string>{"plumb check: vm passes; not drained, nothing to do"});
  hung.show = fixture("show-node-drained-plumb.txt");
  out = act_on_slurm(passing(), options(), hung.runner());
  EXPECT_EQ(out.lines,
            std::vector<std::string>{
                "plumb check: could not resume vm: scontrol: no answer within 10 s (stopped)"});
  EXPECT_EQ(out.exit_code, 3);
}

}  // namespace
}  // namespace plumb::check
