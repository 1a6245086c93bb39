// plumb diff as a gate: a copy of a run with every busbw ÷2 (and every time ×2) fails it whatever
// the noise; a change within the noise is "too noisy to judge" (exit 3); a run that measured
// nothing, or shares nothing with the other, is bad input (exit 2).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "comm/result.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;

// Every rate ÷factor and every time ×factor, as a slower run would have them.
nlohmann::json slower(nlohmann::json doc, double factor) {
  for (auto& row : doc["results"]) {
    for (const char* bw : {"busbw_gbps", "algbw_gbps"}) row[bw] = row[bw].get<double>() / factor;
    for (const char* t : {"time_us", "p50_us", "p99_us", "max_us"}) {
      row[t] = row[t].get<double>() * factor;
    }
  }
  return doc;
}

// A plumb.comm/1 document of allreduce and allgather at 1 KiB..16 MiB (×4), each row with the
// given iteration percentiles and rounds' spread (null: one round).
nlohmann::json comm_doc(double p50, double p99, nlohmann::json spread) {
  nlohmann::json results = nlohmann::json::array();
  for (const char* collective : {"allreduce", "allgather"}) {
    for (uint64_t bytes = 1024; bytes <= (16u << 20); bytes *= 4) {
      comm::Row r;
      r.layer = "world";
      r.group = "world";
      r.group_ranks = 2;
      r.collective = collective;
      r.dtype = "float32";
      r.op = "sum";
      r.requested_bytes = r.bytes = bytes;
      r.count = bytes / 4;
      r.time_us = 100 + static_cast<double>(bytes) / 1000;
      r.algbw_gbps = static_cast<double>(bytes) / 1e3 / r.time_us;
      r.busbw_gbps = r.algbw_gbps;
      r.p50_us = p50 * r.time_us;
      r.p99_us = p99 * r.time_us;
      r.max_us = r.p99_us;
      nlohmann::json j = r;
      j["busbw_spread"] = spread;
      results.push_back(j);
    }
  }
  return {{"schema", "plumb.comm/1"}, {"backend", "mpi"}, {"ranks", 2},
          {"settings", {{"iters", 20}, {"rounds", spread.is_null() ? 1 : 3}}}, {"results", results}};
}

test::Run diff(const std::string& dir, const nlohmann::json& a, const nlohmann::json& b,
               const std::string& extra = "") {
  write_file(dir + "/a.json", a.dump());
  write_file(dir + "/b.json", b.dump());
  return run_command(kPlumb + " diff " + dir + "/a.json " + dir + "/b.json" + extra);
}

// A real one-round run (its noise is whatever the machine gives) against itself halved, and
// against itself ÷10 as in the issue.
TEST(DiffCli, ARealRunAgainstItsHalvedCopyIsARegression) {
  const std::string dir = temp_dir("diff-halved-real");
  const test::Run run = run_command(mpirun(2) + " " + kPlumb + " comm -q -b 1K -e 4M -f 4 -n 5 -w 1 " +
                                    "--collectives allreduce,allgather --json " + dir + "/run.json");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const nlohmann::json a = nlohmann::json::parse(read_file(dir + "/run.json"));
  for (double factor : {2.0, 10.0}) {
    const test::Run r = diff(dir, a, slower(a, factor));
    EXPECT_EQ(r.exit_code, 1) << factor << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("REGRESSION: 2 regression(s) of B against A"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(factor == 2 ? "-50.0%" : "-90.0%"), std::string::npos) << r.out;
  }
}

// Noise far beyond any change: one round with p50/p99 = 0.3 (σ 70%, noise 346% per size), and
// 3 rounds with a MAD of 100% (noise 495%). A halving still fails the gate.
TEST(DiffCli, AHalvedCopyIsARegressionWhateverTheNoise) {
  const std::string dir = temp_dir("diff-halved");
  for (const nlohmann::json& a : {comm_doc(0.3, 1, nullptr), comm_doc(1, 1.1, 1.0)}) {
    const test::Run r = diff(dir, a, slower(a, 2));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("world   allreduce      float32   3 size(s) ≥ 1 MiB      -50.0% noise"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("REGRESSION: 2 regression(s) of B against A beyond the threshold and the "
                         "noise (16 single size(s) beyond their noise;"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
  }
}

// −30% within a noise of 346%: not judged, exit 3, and the way to judge it.
TEST(DiffCli, AChangeWithinTheNoiseIsTooNoisyToJudge) {
  const std::string dir = temp_dir("diff-noisy");
  const nlohmann::json a = comm_doc(0.3, 1, nullptr);
  const test::Run r = diff(dir, a, slower(a, 1 / 0.7), " --json " + dir + "/d.json");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("TOO NOISY TO JUDGE: 2 collective(s) changed by more than 10% but within "
                       "the noise of the runs, none by 2× or more; to judge them, measure A and B "
                       "in rounds (plumb baseline --rounds 5, plumb comm --rounds 5)"),
            std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir + "/d.json"));
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["groups"][0]["verdict"], "too noisy to judge");
}

TEST(DiffCli, AnEmptyRunIsBadInput) {
  const std::string dir = temp_dir("diff-empty");
  nlohmann::json empty = comm_doc(1, 1.1, nullptr);
  empty["results"] = nlohmann::json::array();
  const test::Run r = diff(dir, comm_doc(1, 1.1, nullptr), empty);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "plumb: error: B (file " + dir + "/b.json) measured nothing: its results list "
                   "is empty; expected the rows of a plumb comm or plumb baseline run to compare\n");
}

TEST(DiffCli, RunsThatShareNothingAreBadInput) {
  const std::string dir = temp_dir("diff-disjoint");
  nlohmann::json b = comm_doc(1, 1.1, nullptr);
  for (auto& row : b["results"]) row["dtype"] = "float16";
  const test::Run r = diff(dir, comm_doc(1, 1.1, nullptr), b);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: A (file " + dir + "/a.json) and B (file " + dir + "/b.json) "
                   "share no measurement: A has allgather@world float32 1 KiB..16 MiB, "
                   "allreduce@world float32 1 KiB..16 MiB; B has allgather@world float16 "
                   "1 KiB..16 MiB, allreduce@world float16 1 KiB..16 MiB; expected the same "
                   "(layer, collective, dtype, size) in both\n");
}

TEST(DiffCli, HelpNamesEveryExitStatus) {
  const test::Run r = run_command(kPlumb + " diff --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Exit status: 0 no regression; 1 a regression"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 too noisy to judge"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace plumb::test
