#include <gtest/gtest.h>

#include "check/check.h"
#include "check/clock_sync.h"
#include "check_test_support.h"
#include "support/subprocess.h"

namespace plumb::check {
namespace {

CheckResult run(std::string_view name, const NodeContext& ctx, const std::string& section_yaml = "") {
  const CheckSpec* spec = find_check(name);
  EXPECT_NE(spec, nullptr) << name;
  const YAML::Node node = section_yaml.empty() ? YAML::Node() : YAML::Load(section_yaml);
  return spec->run(ctx, CheckSection(node, "site.yaml", "checks." + std::string(name)));
}

TEST(HostChecks, IrqbalanceRunningIsAWarningNamingItsPid) {
  const test::NodeTree tree("check_irqbalance");
  tree.write("/proc/1/comm", "systemd\n");
  tree.write("/proc/812/comm", "irqbalance\n");
  tree.write("/proc/self/comm", "irqbalance\n");  // not a pid: ignored
  const CheckResult r = run("host.irqbalance", tree.context());
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "running (pid 812)");
  EXPECT_EQ(r.expected, "not running");
  EXPECT_EQ(r.detail,
            "irqbalance moves pinned NIC interrupts: systemctl disable --now irqbalance, then pin "
            "them (see host.nic_irq)");
  EXPECT_EQ(run("host.irqbalance", tree.context(), "{allowed: true}").status, Status::kOk);
  tree.write("/proc/812/comm", "sshd\n");
  EXPECT_EQ(run("host.irqbalance", tree.context()).value, "not running");
}

TEST(HostChecks, NoProcIsUnknownNotOk) {
  const test::NodeTree tree("check_noproc");
  const CheckResult r = run("host.irqbalance", tree.context());
  EXPECT_EQ(r.status, Status::kUnknown);
  EXPECT_EQ(r.detail, tree.root() + "/proc cannot be listed");
}

TEST(HostChecks, HugePagesAgainstTheSitesReservation) {
  const test::NodeTree tree("check_hugepages");
  tree.write("/proc/meminfo", "HugePages_Total:     512\nHugePages_Free:      512\nHugepagesize:       2048 kB\n");
  tree.write("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
  const CheckResult few = run("host.hugepages", tree.context(), "{pages: 1024}");
  EXPECT_EQ(few.status, Status::kWarning);
  EXPECT_EQ(few.value, "512 pages of 2048 kB, THP always");
  EXPECT_EQ(few.expected, "1024 pages");
  const CheckResult thp = run("host.hugepages", tree.context(), "{pages: 512, thp: never}");
  EXPECT_EQ(thp.status, Status::kWarning);
  EXPECT_EQ(thp.detail, "set it: echo never > /sys/kernel/mm/transparent_hugepage/enabled");
  EXPECT_EQ(run("host.hugepages", tree.context(), "{pages: 512, thp: always}").status, Status::kOk);
}

TEST(HostChecks, CheckpointSpaceBelowTheSitesMinimumIsCritical) {
  const test::NodeTree tree("check_disk");
  tree.write("/ckpt/.keep", "");
  NodeContext ctx = tree.context();
  EXPECT_TRUE(run("host.disk", ctx).skipped);
  ctx.checkpoint_dir = "/ckpt";
  const CheckResult r = run("host.disk", ctx, "{min_free_gb: 1000000000}");
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.expected, ">= 1e+09 GB free");
  EXPECT_NE(r.value.find(" GB free of "), std::string::npos);
  EXPECT_EQ(run("host.disk", ctx, "{min_free_gb: 0, warning: 0, critical: 0}").status, Status::kOk);
  ctx.checkpoint_dir = "/missing";
  EXPECT_EQ(run("host.disk", ctx).detail, tree.root() + "/missing: cannot be read (statvfs)");
}

TEST(ClockSync, ChronycTrackingIsRead) {
  const auto synced = parse_chronyc_tracking(
      plumb::test::read_file(std::string(PLUMB_SOURCE_DIR) + "/tests/fixtures/check/chrony/tracking_synchronised.txt"));
  ASSERT_TRUE(synced);
  EXPECT_TRUE(synced->synchronised);
  EXPECT_DOUBLE_EQ(*synced->offset_s, -0.000001501);
  const auto unsynced = parse_chronyc_tracking(plumb::test::read_file(
      std::string(PLUMB_SOURCE_DIR) + "/tests/fixtures/check/chrony/tracking_unsynchronised.txt"));
  ASSERT_TRUE(unsynced);
  EXPECT_FALSE(unsynced->synchronised);
  EXPECT_FALSE(parse_chronyc_tracking("506 Cannot talk to daemon\n"));
  EXPECT_TRUE(parse_timedatectl_show("Timezone=UTC\nNTPSynchronized=yes\n")->synchronised);
  EXPECT_FALSE(parse_timedatectl_show("NTPSynchronized=no\n")->synchronised);
}

TEST(ClockSync, TheClockCheckJudgesTheDaemonsAnswer) {
  const test::NodeTree tree("check_clock");
  const test::StandInTools tools("check_clock_tools");
  tools.prints_fixture("chronyc", "chrony/tracking_synchronised.txt");
  EXPECT_EQ(run("host.clock", tree.context()).value, "synchronised, offset -0.002 ms (chronyc tracking)");
  tools.prints_fixture("chronyc", "chrony/tracking_offset_25ms.txt");
  const CheckResult off = run("host.clock", tree.context());
  EXPECT_EQ(off.status, Status::kWarning);
  EXPECT_EQ(off.expected, "synchronised, offset < 10 ms");
  EXPECT_EQ(run("host.clock", tree.context(), "{warning: 0.05}").status, Status::kOk);
  tools.prints_fixture("chronyc", "chrony/tracking_unsynchronised.txt");
  const CheckResult unsynced = run("host.clock", tree.context());
  EXPECT_EQ(unsynced.status, Status::kCritical);
  EXPECT_EQ(unsynced.detail, "check the time daemon: chronyc tracking; chronyc sources -v");
}

TEST(ClockSync, AHungChronycIsUnknownWithinTheTimeout) {
  const test::NodeTree tree("check_clock_hung");
  const test::StandInTools tools("check_clock_hung_tools");
  tools.runs("chronyc", "sleep 30");
  NodeContext ctx = tree.context();
  ctx.tool_timeout_s = 0.3;
  const CheckResult r = run("host.clock", ctx);
  EXPECT_EQ(r.status, Status::kUnknown);
  EXPECT_EQ(r.detail, "chronyc: no answer within 0.3 s (stopped)");
}

TEST(ClockSync, NoDaemonIsSkippedUnlessRequired) {
  const test::NodeTree tree("check_clock_none");
  const test::StandInTools tools("check_clock_none_tools");
  tools.runs("chronyc", "echo '506 Cannot talk to daemon'; exit 1");
  tools.runs("timedatectl", "echo 'System has not been booted with systemd' >&2; exit 1");
  const CheckResult r = run("host.clock", tree.context());
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.detail, "no time daemon answered: chronyc: exit status 1; timedatectl: exit status 1");
  EXPECT_EQ(run("host.clock", tree.context(), "{required: true}").status, Status::kCritical);
}

}  // namespace
}  // namespace plumb::check
