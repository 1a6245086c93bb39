// plumb topo end to end: the real binary on this machine, alone and under the real mpirun.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/subprocess.h"

namespace plumb {
namespace {

using test::run_command;

const std::string kPlumb = PLUMB_BIN;
const std::string kFixture = std::string(PLUMB_TEST_FIXTURES) + "/topo/dgx-like-2numa.xml";

TEST(TopoE2E, PrintsThisMachinesTree) {
  const test::Run run = run_command(kPlumb + " topo");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("# plumb topo · ", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("NUMA node 0 · "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("# 1 rank\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("# warnings: "), std::string::npos) << run.out;
  EXPECT_EQ(run.err, "");
}

TEST(TopoE2E, TwoRanksUnderMpirunGiveTwoRecords) {
  const std::string dir = test::temp_dir("topo-mpi");
  const test::Run run =
      run_command(test::mpirun(2) + " " + kPlumb + " topo -q --json " + dir + "/out.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  const auto j = nlohmann::json::parse(test::read_file(dir + "/out.json"));
  EXPECT_EQ(j["schema"], "plumb.topo/1");
  ASSERT_EQ(j["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"][0]["rank"], 0);
  EXPECT_EQ(j["ranks"][1]["rank"], 1);
  EXPECT_EQ(j["ranks"][1]["local_rank"], 1);
  EXPECT_NE(j["ranks"][1]["cpus"], "");
  ASSERT_EQ(j["hosts"].size(), 1u);  // both ranks on this host: probed once
  EXPECT_EQ(j["hosts"][0]["host"], j["ranks"][1]["host"]);
}

TEST(TopoE2E, LocalRankNamesAnAcceleratorThisMachineLacks) {
  const test::Run run =
      run_command("LOCAL_RANK=0 CUDA_VISIBLE_DEVICES=GPU-1234 " + kPlumb + " topo --json -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);  // the tree went to standard error
  EXPECT_EQ(j["ranks"][0]["accelerator"]["named_by"],
            "LOCAL_RANK=0, CUDA_VISIBLE_DEVICES=GPU-1234");
  EXPECT_NE(run.err.find("cannot be mapped to a PCI device"), std::string::npos) << run.err;
}

TEST(TopoE2E, ReadsAnXmlExport) {
  const test::Run run = run_command(kPlumb + " topo --xml " + kFixture + " --json -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["hosts"][0]["host"], "host-a");
  EXPECT_EQ(j["hosts"][0]["pci"].size(), 15u);
  EXPECT_TRUE(j["ranks"].empty());
  EXPECT_NE(run.err.find("# plumb topo · host-a · 2 packages · 2 NUMA nodes · 32 cores / 64 PUs"),
            std::string::npos)
      << run.err;
}

TEST(TopoE2E, MissingXmlExitsTwoNamingTheFile) {
  const test::Run run = run_command(kPlumb + " topo --xml missing.xml");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "plumb: error: --xml missing.xml: cannot read: No such file or directory\n");
  EXPECT_EQ(run.out, "");
}

TEST(TopoE2E, InvalidXmlExitsTwoNamingTheFile) {
  const std::string file = test::temp_dir("topo-xml") + "/bad.xml";
  test::write_file(file, "<topology version=\"2.0\"><object type=\"Machine\">");
  const test::Run run = run_command(kPlumb + " topo --xml " + file);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "plumb: error: --xml " + file +
                         ": not an hwloc XML topology (export one with lstopo --of xml)\n");
}

TEST(TopoE2E, UnwritableJsonExitsTwoBeforeProbing) {
  const test::Run alone = run_command(kPlumb + " topo --json /nonexistent/dir/out.json");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_EQ(alone.err,
            "plumb: error: --json /nonexistent/dir/out.json: cannot write: folder "
            "/nonexistent/dir does not exist\n");
  EXPECT_EQ(alone.out, "");
  const test::Run ranks =
      run_command(test::mpirun(2) + " " + kPlumb + " topo --json /nonexistent/dir/out.json");
  EXPECT_EQ(ranks.exit_code, 2);
  // Only rank 0 writes the JSON: comm::agree names it, and every rank exits 2.
  EXPECT_EQ(ranks.err.rfind("plumb: error: rank 0 on host ", 0), 0u) << ranks.err;
  EXPECT_NE(ranks.err.find(": --json /nonexistent/dir/out.json: cannot write: folder "
                           "/nonexistent/dir does not exist (1 of 2 ranks failed)\n"),
            std::string::npos)
      << ranks.err;
}

}  // namespace
}  // namespace plumb
