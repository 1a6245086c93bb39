// plumb mem creep end to end: a clean two-rank run with a checkpoint saved and loaded (exit 0,
// pass), the same with a leak on one rank (exit 1, named with its rate, plumb.mem-creep/1 on
// standard output), and a malformed line (exit 2 naming the file and line).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;
constexpr double kMiB = 1024.0 * 1024;
constexpr double kLevel = 2048 * kMiB;

// 30 steps of 2 ranks: 5 warm-up steps rising to 2 GiB, a save before step 15 and a load before
// step 16; `leak` bytes more per step on rank 1.
std::string run_file(const std::string& dir, double leak) {
  std::string text;
  for (int step = 1; step <= 30; ++step) {
    const double warm = step <= 5 ? (6 - step) * 256 * kMiB : 0;
    const std::string mark = step == 15 ? R"(,"checkpoint":"saved")"
                             : step == 16 ? R"(,"checkpoint":"loaded")" : "";
    for (int rank = 0; rank < 2; ++rank) {
      const double allocated = kLevel - warm + (rank == 1 ? leak * step : 0) + (step % 3) * kMiB;
      text += fmt::format(R"({{"schema":"plumb.train-events/1","step":{},"step_seconds":0.5,)"
                          R"("rank":{},"memory":{{"allocated_bytes":{:.0f}}}{}}})", step, rank,
                          allocated, mark) + "\n";
    }
  }
  const std::string path = dir + (leak > 0 ? "/leak.jsonl" : "/clean.jsonl");
  write_file(path, text);
  return path;
}

TEST(MemCreepCli, CleanRunIsFlatAndPassesTheCheckpointCheck) {
  const std::string file = run_file(temp_dir("mem_creep_clean"), 0);
  const test::Run r = run_command(kPlumb + " mem creep " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("checkpoint rank "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": pass\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("LEAK"), std::string::npos) << r.out;
}

TEST(MemCreepCli, LeakExitsOneWithItsRate) {
  const std::string file = run_file(temp_dir("mem_creep_leak"), 4 * kMiB);
  const test::Run r = run_command(kPlumb + " mem creep " + file + " --json -");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "plumb.mem-creep/1");
  EXPECT_EQ(j["ranks"][0]["verdict"], "flat");
  EXPECT_EQ(j["ranks"][1]["verdict"], "leak");
  EXPECT_EQ(j["worst"]["rank"], "1");
  EXPECT_NEAR(j["worst"]["creep_bytes_per_step"].get<double>(), 4 * kMiB, 0.2 * 4 * kMiB);
  const test::Run console = run_command(kPlumb + " mem creep " + file);
  EXPECT_EQ(console.exit_code, 1);
  EXPECT_NE(console.out.find("worst      rank 1: +4.0 MiB per step"), std::string::npos) << console.out;
}

TEST(MemCreepCli, BadLineIsNamed) {
  const std::string dir = temp_dir("mem_creep_bad");
  write_file(dir + "/bad.jsonl", R"({"schema":"plumb.train-events/1","step":1,"step_seconds":-1})" "\n");
  const test::Run r = run_command(kPlumb + " mem creep " + dir + "/bad.jsonl");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: " + dir + "/bad.jsonl:1: 'step_seconds' is '-1', expected a number "
                   "from 1e-07 to 604800\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace plumb::test
