// plumb comm end to end: real mpirun, real OpenMPI, the real binary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "comm/collective.h"
#include "support/processes.h"
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
  // The partial files the sweep wrote beside its targets are gone with the finished files there.
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.json.partial"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.csv.partial"));

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

// Counts that used to fall back to defaults (or run nothing) are refused, naming the option and
// the accepted range, before MPI starts.
TEST(CommE2E, CountsOutOfRangeAreRefused) {
  const std::map<std::string, std::string> refused = {
      {"-i 0", "plumb: error: --step-bytes must be 1 or more (or left out to multiply by "
               "--step-factor), got 0\n"},
      {"-n 0", "plumb: error: --iters: must be a whole number from 1 to 1000000, got 0; run "
               "'plumb --help' for usage\n"},
      {"--rounds 0", "plumb: error: --rounds: must be a whole number from 1 to 100, got 0; run "
                     "'plumb --help' for usage\n"},
      {"-w -1", "plumb: error: --warmup: must be a whole number from 0 to 1000000, got -1; run "
                "'plumb --help' for usage\n"},
      {"--timeout -1", "plumb: error: --timeout: must be a whole number from 0 to 86400, got -1; "
                      "run 'plumb --help' for usage\n"},
      {"--iters 2x", "plumb: error: --iters: must be a whole number from 1 to 1000000, got 2x; "
                     "run 'plumb --help' for usage\n"},
  };
  for (const auto& [options, message] : refused) {
    const test::Run run = run_command(kPlumb + " comm " + options);
    EXPECT_EQ(run.exit_code, 2) << options;
    EXPECT_EQ(run.err, message) << options;
    EXPECT_EQ(run.out, "") << options;
  }
}

// A rank stopped in the middle of the sweep (SIGSTOP) would hang the others forever: the
// watchdog names it once a measurement has run past --timeout, and the job is aborted (exit 2).
TEST(CommE2E, StoppedRankIsNamedAndTheJobAborted) {
  const std::string dir = test::temp_dir("comm-sigstop");
  const std::string marker = dir + "/stopped.json";  // in every rank's command line
  test::Run run;
  std::thread runner([&] {
    // many short measurements (a sweep of minutes), so that the one that is stopped is short
    run = run_command("timeout 180 " + mpirun(2) + " " + kPlumb + " comm -q --timeout 3 -b 8 -e "
                      "4M -i 8 -n 2 -w 0 -c 0 --collectives allreduce --layers world --json " +
                      marker);
  });
  pid_t rank1 = 0;
  auto find_rank1 = [&] {
    for (const test::Process& p : test::processes_with(marker)) {
      const bool plumb = std::filesystem::path(p.argv[0]).filename() == "plumb";
      const auto threads = test::thread_names(p.pid);
      if (plumb && test::environment_of(p.pid, "OMPI_COMM_WORLD_RANK") == "1" &&
          std::find(threads.begin(), threads.end(), "plumb-watchdog") != threads.end()) {
        rank1 = p.pid;
      }
    }
    return rank1 != 0;
  };
  const bool found = test::wait_for(find_rank1, std::chrono::seconds(60));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto stopped = std::chrono::steady_clock::now();
  if (found) kill(rank1, SIGSTOP);
  runner.join();
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  for (const test::Process& p : test::processes_with(marker)) {  // leftovers, if it failed
    kill(p.pid, SIGCONT);
    kill(p.pid, SIGKILL);
  }
  ASSERT_TRUE(found);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_LT(seconds, 20.0) << run.err;
  EXPECT_NE(run.err.find("did not finish within --timeout 3 s: rank 1 on host "), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find(" did not answer (stopped, dead, or its host hangs); the job is aborted"),
            std::string::npos) << run.err;
}

// A sweep killed midway (srun's or sbatch's time limit, SIGKILL) with its console piped to a file
// (| tee, a batch log): every size measured before the kill is in the piped output, and in the
// partial files beside the targets ("complete": false, valid JSON; the CSV's rows), while the
// targets keep what they held: a tool reading out.json never gets a partial sweep as a result.
TEST(CommE2E, AKilledSweepUnderAPipeLeavesEveryMeasuredRow) {
  const std::string dir = test::temp_dir("comm-killed-piped");
  const std::string json = dir + "/out.json";
  const std::string partial = json + ".partial";
  test::write_file(json, "the previous run's file\n");
  std::thread runner([&] {
    // The first sizes take milliseconds, 64 MiB × 1000 iterations tens of seconds: the kill
    // always finds the sweep running with rows done.
    // In parentheses: run_command's own "> stdout" would otherwise take cat's output.
    run_command("(timeout 180 " + mpirun(2) + " " + kPlumb + " comm -b 8 -e 64M -f 4 --iters 1000 --warmup 0 "
                "--collectives allreduce --layers world --json " + json + " --csv " + dir +
                "/out.csv | cat > " + dir + "/console.txt)");
  });
  auto rows_in_json = [&] {
    try {
      return nlohmann::json::parse(test::read_file(partial)).at("results").size();
    } catch (const std::exception&) {
      return size_t{0};  // not there yet
    }
  };
  const bool measured = test::wait_for([&] { return rows_in_json() >= 4; }, std::chrono::seconds(60));
  for (const test::Process& p : test::processes_with(json)) {
    if (std::filesystem::path(p.argv[0]).filename() == "plumb" &&
        test::environment_of(p.pid, "OMPI_COMM_WORLD_RANK") == "0") {
      kill(p.pid, SIGKILL);
    }
  }
  runner.join();
  for (const test::Process& p : test::processes_with(json)) kill(p.pid, SIGKILL);  // leftovers
  ASSERT_TRUE(measured);

  EXPECT_EQ(test::read_file(json), "the previous run's file\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.csv"));
  const auto doc = nlohmann::json::parse(test::read_file(partial));
  EXPECT_EQ(doc["complete"], false);
  const size_t rows = doc["results"].size();
  EXPECT_GE(rows, 4u);
  EXPECT_LT(rows, 12u);  // 8 B to 64 MiB by 4: 12 sizes, not all measured
  EXPECT_EQ(doc["results"][0]["requested_bytes"], 8);
  const std::string console = test::read_file(dir + "/console.txt");
  EXPECT_NE(console.find("# allreduce · layer world\n"), std::string::npos) << console;
  for (size_t i = 0; i < rows; ++i) {
    const std::string size = std::to_string(doc["results"][i]["bytes"].get<uint64_t>());
    EXPECT_NE(console.find("\n" + std::string(12 - size.size(), ' ') + size + " "),
              std::string::npos) << size << " not in\n" << console;
  }
  std::istringstream csv(test::read_file(dir + "/out.csv.partial"));
  std::string line;
  size_t lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_GE(lines, rows);  // the header and every size but perhaps the one being written

  // plumb's own readers refuse the partial file as a result.
  const test::Run diff = run_command(kPlumb + " diff " + partial + " " + partial);
  EXPECT_EQ(diff.exit_code, 2);
  EXPECT_EQ(diff.err, "plumb: error: " + partial + ": says \"complete\": false: the partial file "
                      "of a plumb comm sweep that did not finish (the rows it measured, no "
                      "summary), which no command takes as a result; use the --json file a "
                      "finished sweep writes\n");
}

// A partial file may not be another output: "--json r.partial --csv r" would write one file twice.
TEST(CommE2E, AnOutputThatIsAnotherOutputsPartialFileIsRefused) {
  const std::string dir = test::temp_dir("comm-partial-overlap");
  const test::Run run = run_command(kPlumb + " comm -b 64 -e 64 --collectives allreduce --json " +
                                    dir + "/r.partial --csv " + dir + "/r");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "plumb: error: --json " + dir + "/r.partial and --csv's partial file " + dir +
                         "/r.partial: the same file for two outputs; give each its own\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.partial"));
}

}  // namespace
}  // namespace plumb
