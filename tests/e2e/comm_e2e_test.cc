// plumb comm end to end: real mpirun, real OpenMPI, the real binary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <sstream>

#include "comm/collective.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

using test::mpirun;
using test::run_command;

const std::string kPlumb = PLUMB_BIN;
const std::string kMap = std::string(PLUMB_DATA_DIR) + "/clusters/sim-2racks-2nodes-2ranks.yaml";

// The acceptance run: 8 ranks, 2 racks × 2 nodes × 2 ranks, every layer.
TEST(CommE2E, EightRanksEveryLayerEveryCollective) {
  const std::string dir = test::temp_dir("e2e-8");
  const test::Run run = run_command(mpirun(8) + " " + kPlumb + " comm -b 8 -e 1M -f 4 --cluster " +
                                    kMap + " --layers world,node,rail,spine --json " + dir +
                                    "/out.json --csv " + dir + "/out.csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(test::read_file(dir + "/out.json"));
  EXPECT_EQ(j["schema"], "plumb.comm/1");
  EXPECT_EQ(j["backend"], "mpi");
  EXPECT_EQ(j["ranks"], 8);
  EXPECT_TRUE(j["placement"]["simulated"].get<bool>());

  std::map<std::string, std::set<std::string>> groups_per_layer;
  std::map<std::string, std::set<std::string>> collectives_per_layer;
  for (const auto& r : j["results"]) {
    const std::string layer = r["layer"];
    groups_per_layer[layer].insert(r["group"].get<std::string>());
    collectives_per_layer[layer].insert(r["collective"].get<std::string>());
    EXPECT_EQ(r["wrong"], 0) << r.dump();
    EXPECT_EQ(r["group_ranks"], layer == "world" ? 8 : 2);
    // busbw and algbw agree with the formulas
    const double seconds = r["time_us"].get<double>() * 1e-6;
    const double algbw = r["bytes"].get<double>() / 1e9 / seconds;
    EXPECT_NEAR(r["algbw_gbps"].get<double>(), algbw, 1e-9 * (1 + algbw));
    const double factor = comm::find_collective(r["collective"].get<std::string>())
                              .bus_factor(r["group_ranks"].get<int>());
    EXPECT_NEAR(r["busbw_gbps"].get<double>(), algbw * factor, 1e-9 * (1 + algbw));
    EXPECT_LE(r["p50_us"].get<double>(), r["p99_us"].get<double>());
    EXPECT_LE(r["p99_us"].get<double>(), r["max_us"].get<double>());
  }
  EXPECT_EQ(groups_per_layer["world"].size(), 1u);
  for (const char* layer : {"node", "rail", "spine"}) {
    EXPECT_EQ(groups_per_layer[layer].size(), 4u) << layer;
  }
  for (const auto& [layer, colls] : collectives_per_layer) EXPECT_EQ(colls.size(), 7u) << layer;
  EXPECT_EQ(j["results"].size(), 4u * 0 + (1 + 4 + 4 + 4) * 7 * 9);  // 13 groups, 7 colls, 9 sizes

  // CSV: a header and the same rows.
  std::istringstream csv(test::read_file(dir + "/out.csv"));
  std::string line;
  size_t lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 1 + j["results"].size());

  // The console shows every layer's table and summary lines; the note about rounding goes to
  // stderr.
  EXPECT_NE(run.out.find("# allreduce · layer spine · slowest of 4 groups per size"),
            std::string::npos);
  EXPECT_NE(run.out.find("# Out of bounds values : 0 OK"), std::string::npos);
  EXPECT_NE(run.err.find("plumb: note: allgather on layer world: 1 size(s) rounded down to a "
                         "multiple of 32 B (4 B float32 × 8 ranks), as nccl-tests does"),
            std::string::npos)
      << run.err;
}

// Every data type and reduction stays exact on 3 ranks (not a power of two).
TEST(CommE2E, EveryTypeAndOpChecksClean) {
  for (const char* dtype : {"int8", "int32", "float16", "bfloat16", "float32", "float64"}) {
    for (const char* op : {"sum", "prod", "max", "min", "avg"}) {
      const test::Run run = run_command(
          mpirun(3) + " " + kPlumb + " comm -q -b 4 -e 4K -f 16 -n 2 -w 1 -d " + dtype + " -o " +
          op + " --collectives allreduce,reducescatter,reduce -r 2 --json -");
      ASSERT_EQ(run.exit_code, 0) << dtype << " " << op << "\n" << run.err;
      const auto j = nlohmann::json::parse(run.out);
      for (const auto& r : j["results"]) {
        EXPECT_EQ(r["wrong"], 0) << dtype << " " << op << " " << r.dump();
        EXPECT_EQ(r["op"], op);
      }
    }
  }
}

// A corrupted MPI_Allreduce (through MPI's profiling interface) must fail the run with exit 1.
TEST(CommE2E, WrongElementsExitOne) {
  const test::Run run =
      run_command(mpirun(2) + " -x LD_PRELOAD=" + PLUMB_CORRUPT_LIB + " " + kPlumb +
                  " comm -b 1K -e 4K -n 3 -w 1 --collectives allreduce,allgather --json -");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("plumb: 2 wrong element(s): the collectives returned incorrect data"),
            std::string::npos)
      << run.err;
  const auto j = nlohmann::json::parse(run.out);
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["wrong"], r["collective"] == "allreduce" ? 1 : 0) << r.dump();
  }
}

TEST(CommE2E, MoreRanksThanTheMapDescribes) {
  const test::Run run = run_command(mpirun(10) + " " + kPlumb + " comm --cluster " + kMap);
  EXPECT_EQ(run.exit_code, 2);
  // Only rank 0 speaks; mpirun then adds its own report of the non-zero exit.
  const std::string line = "plumb: error: " + kMap +
                           ": describes 8 ranks (4 nodes × ranks_per_node 2) but 10 ranks are "
                           "running\n";
  EXPECT_EQ(run.err.substr(0, line.size()), line) << run.err;
  EXPECT_EQ(run.err.find(line, 1), std::string::npos) << "printed more than once";
}

TEST(CommE2E, JsonOnStandardOutputMovesTheTableToStandardError) {
  const test::Run run = run_command(mpirun(2) + " " + kPlumb +
                                    " comm -b 64 -e 64 --collectives sendrecv --json -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);  // stdout is pure JSON
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["bytes"], 64);
  EXPECT_NE(run.err.find("# sendrecv · layer world"), std::string::npos);
}

// Too large a size is refused before anything runs, once, agreed by every rank.
TEST(CommE2E, SizeBeyondHostMemoryIsRefusedUpFront) {
  const test::Run run = run_command(mpirun(2) + " " + kPlumb + " comm -b 1M -e 64T");
  EXPECT_EQ(run.exit_code, 2);
  const std::string start = "plumb: error: --max-bytes 64 TiB: each rank needs about ";
  EXPECT_EQ(run.err.substr(0, start.size()), start) << run.err;
  EXPECT_EQ(run.err.find("plumb: error:", 1), std::string::npos) << run.err;
}

// Environment values are recorded even when they are not UTF-8; the JSON stays valid.
TEST(CommE2E, NonUtf8EnvironmentKeepsJsonValid) {
  const test::Run run = run_command("NCCL_TEST_VALUE=$(printf 'a\\377b') " + mpirun(2) +
                                    " -x NCCL_TEST_VALUE " + kPlumb +
                                    " comm -q -b 64 -e 64 --collectives allreduce --json -");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["env"]["NCCL_TEST_VALUE"], "a\uFFFDb");
}

}  // namespace
}  // namespace plumb
