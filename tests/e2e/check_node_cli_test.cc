// plumb check node end to end: the real binary against a node tree (--root) and stand-in tools on
// PATH. A healthy node passes; irqbalance running is a warning (exit 1); a version other than the
// check file's is critical (exit 2); a hung tool is unknown (exit 3) within its timeout; a bad
// check file cannot run (exit 3); the textfile passes promtool; --store keeps the passes and
// names the repeat offender; plumb list and plumb check history show them.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;

struct Node {
  std::string dir = temp_dir("check_node_cli");
  std::string root = dir + "/root";
  std::string tools = dir + "/bin";

  Node() {
    put("/proc/1/comm", "systemd\n");
    put("/proc/meminfo", "HugePages_Total:       0\nHugepagesize:       2048 kB\n");
    put("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    put("/proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n");
    tool("chronyc", "cat '" + std::string(PLUMB_SOURCE_DIR) +
                        "/tests/fixtures/check/chrony/tracking_synchronised.txt'");
    write_file(dir + "/site.yaml",
               "schema: plumb.check-file/1\nsku: test node\nchecks:\n"
               "  versions.software: {expected: {nvidia_driver: 550.54.15}}\n");
  }
  void put(const std::string& absolute, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(root + absolute).parent_path());
    write_file(root + absolute, text);
  }
  void tool(const std::string& name, const std::string& body) const {
    std::filesystem::create_directories(tools);
    write_file(tools + "/" + name, "#!/bin/sh\n" + body + "\n");
    ::chmod((tools + "/" + name).c_str(), 0755);
  }
  // plumb check node on this tree, host node7, with the stand-ins first on PATH.
  test::Run check(const std::string& args) const {
    return run_command("PATH='" + tools + "':\"$PATH\" " + kPlumb + " check node --host node7 --root '" +
                       root + "' --config '" + dir + "/site.yaml' --only host,versions.software " + args);
  }
};

TEST(CheckNodeCli, AHealthyNodePasses) {
  const Node node;
  const test::Run r = node.check("--json '" + node.dir + "/c.json'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("  ok        versions.software    nvidia_driver 550.54.15  [expected as in the check file]\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CHECK OK - node7: 4 checks passed\n"), std::string::npos) << r.out;
  const nlohmann::json doc = nlohmann::json::parse(read_file(node.dir + "/c.json"));
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["sku"], "test node");
  EXPECT_LT(doc["seconds"].get<double>(), 10.0);  // the target, on this 2-core machine
}

TEST(CheckNodeCli, IrqbalanceRunningIsAWarning) {
  const Node node;
  node.put("/proc/4242/comm", "irqbalance\n");
  const test::Run r = node.check("");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("CHECK WARNING - node7: host.irqbalance: running (pid 4242) (expected not running)\n"),
            std::string::npos) << r.out;
}

TEST(CheckNodeCli, AVersionOtherThanTheCheckFilesIsCritical) {
  const Node node;
  node.put("/proc/driver/nvidia/version",
           "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n");
  const test::Run r = node.check("-q");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out,
            "CHECK CRITICAL - node7: versions.software: nvidia_driver 535.183.01 (expected "
            "nvidia_driver 550.54.15)\n");
}

TEST(CheckNodeCli, AHungToolIsUnknownWithinItsTimeout) {
  const Node node;
  node.tool("chronyc", "sleep 60");
  const test::Run r = node.check("--timeout 0.5");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("  unknown   host.clock           -\n"
                       "                                check first: chronyc: no answer within 0.5 s (stopped)\n"),
            std::string::npos) << r.out;
}

TEST(CheckNodeCli, ABadCheckFileCannotRun) {
  const Node node;
  write_file(node.dir + "/site.yaml", "schema: plumb.check-file/1\nchecks:\n  host.irqbalance: {alowed: true}\n");
  const test::Run r = node.check("");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err, "plumb: error: " + node.dir +
                       "/site.yaml:3: unknown key 'alowed' in checks.host.irqbalance (did you mean "
                       "'allowed'?); expected one of allowed, enabled\n");
}

TEST(CheckNodeCli, TheTextfilePassesPromtool) {
  if (run_command("command -v promtool").exit_code != 0) GTEST_SKIP() << "promtool not installed";
  const Node node;
  node.put("/proc/4242/comm", "irqbalance\n");
  const test::Run r = node.check("--textfile '" + node.dir + "/plumb.prom'");
  EXPECT_EQ(r.exit_code, 1);
  const std::string text = read_file(node.dir + "/plumb.prom");
  EXPECT_NE(text.find("plumb_check_status{check=\"host.irqbalance\",category=\"host\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("plumb_check_node_status 1\n"), std::string::npos);
  const test::Run lint = run_command("promtool check metrics < '" + node.dir + "/plumb.prom'");
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

TEST(CheckNodeCli, StoredPassesNameTheRepeatOffender) {
  const Node node;
  const std::string db = "--db '" + node.dir + "/plumb.db'";
  node.put("/proc/4242/comm", "irqbalance\n");
  for (int i = 0; i < 2; ++i) EXPECT_EQ(node.check("-q --store " + db).exit_code, 1);
  EXPECT_EQ(node.check("-q --store " + db).out,
            "plumb check: stored as check record 3\n"
            "repeat offender: node7 failed host.irqbalance in 3 of its last 3 runs\n"
            "CHECK WARNING - node7: host.irqbalance: running (pid 4242) (expected not running)\n");
  const test::Run history = run_command(kPlumb + " check history " + db);
  EXPECT_EQ(history.exit_code, 1) << history.err;
  EXPECT_NE(history.out.find("node7                    warning warning warning\n"), std::string::npos)
      << history.out;
  EXPECT_NE(history.out.find("  node7 failed host.irqbalance in 3 of its last 3 runs\n"), std::string::npos);
  const test::Run list = run_command(kPlumb + " list " + db);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("host.irqbalance"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("CHECK  CREATED"), std::string::npos) << list.out;
  EXPECT_EQ(run_command(kPlumb + " check history -k 6 -n 5 " + db).err,
            "plumb: error: -k 6 is more than -n 5: a check cannot fail in more runs than are looked at\n");
}

}  // namespace
}  // namespace plumb::test
