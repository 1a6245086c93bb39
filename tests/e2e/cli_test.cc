// The CLI's answers to mistakes: one clear line, exit 2, nothing run.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "support/subprocess.h"

namespace plumb {
namespace {

using test::run_command;

const std::string kPlumb = PLUMB_BIN;

TEST(Cli, VersionAndHelp) {
  const std::string dir = test::temp_dir("cli-version");
  const std::string env = "env -u PLUMB_DB XDG_CONFIG_HOME=" + dir + " XDG_DATA_HOME=" + dir + "/data ";
  test::Run v = run_command(env + kPlumb + " --version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out, std::string("plumb ") + PLUMB_VERSION + "\nstore:  " + dir +
                       "/data/plumb/plumb.db (the default)\nconfig: none (looked for " + dir +
                       "/plumb/config.yaml, /etc/plumb/config.yaml)\n");
  test::Run h = run_command(kPlumb + " --help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("comm"), std::string::npos);
  test::Run c = run_command(kPlumb + " comm --help");
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_NE(c.out.find("-b,--min-bytes"), std::string::npos);
  EXPECT_NE(c.out.find("--cluster"), std::string::npos);
}

// plumb --version says which store a command opens without --db and why, its password masked.
TEST(Cli, VersionNamesTheStoreAndTheConfigFile) {
  const std::string dir = test::temp_dir("cli-version-config");
  std::filesystem::create_directories(dir + "/plumb");
  const std::string config = dir + "/plumb/config.yaml";
  std::ofstream(config) << "store: postgresql://plumb:S3cret@db.example.org/team\n";
  const std::string env = "env -u PLUMB_DB XDG_CONFIG_HOME=" + dir + " ";
  const std::string head = std::string("plumb ") + PLUMB_VERSION + "\n";
  test::Run v = run_command(env + kPlumb + " --version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out, head + "store:  postgresql://plumb:***@db.example.org/team (" + config +
                       ":1)\nconfig: " + config + "\n");
  v = run_command(env + "PLUMB_DB=/srv/plumb.db " + kPlumb + " --version");
  EXPECT_EQ(v.out, head + "store:  /srv/plumb.db (PLUMB_DB)\nconfig: " + config + "\n");
  // A wrong config file is named with its line; the version still shows.
  std::ofstream(config) << "stor: /srv/plumb.db\n";
  v = run_command(env + kPlumb + " --version");
  EXPECT_EQ(v.exit_code, 0);
  const std::string wrong = config + ":1: unknown key 'stor' (did you mean 'store'?); expected one of store";
  EXPECT_EQ(v.out, head + "store:  unknown: " + wrong + "\nconfig: wrong: " + wrong + "\n");
  // ... and every command that opens the default store refuses it: exit 2, the same line.
  const test::Run list = run_command(env + kPlumb + " list");
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_EQ(list.err, "plumb: error: " + wrong + "\n");
}

TEST(Cli, DidYouMean) {
  test::Run r = run_command(kPlumb + " comn");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: unknown command 'comn' (did you mean 'comm'?); commands: "
                   "baseline, comm, topo, env, import, list, show, export, store, report, diff, mem, step, run, "
                   "recover, checkpoint, check, serve, k8s, plan, precision, exporter, alerts, dashboard, alert-relay, "
                   "completion\n");
}

TEST(Cli, NoCommand) {
  test::Run r = run_command(kPlumb);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("plumb: error: A subcommand is required"), std::string::npos) << r.err;
}

TEST(Cli, MinLargerThanMax) {
  test::Run r = run_command(kPlumb + " comm -b 2M -e 1M");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --min-bytes 2097152 is larger than --max-bytes 1048576\n");
}

TEST(Cli, EveryBadOptionAtOnce) {
  test::Run r = run_command(kPlumb + " comm -d float33 -o mean --collectives allreduce,gather");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "plumb: error: --dtype: unknown data type 'float33' (did you mean 'float32'?); expected "
            "one of int8, int32, float16, bfloat16, float32, float64\n"
            "--op: unknown reduction 'mean'; expected one of sum, prod, max, min, avg\n"
            "--collectives: unknown collective 'gather'; expected one of allreduce, allgather, "
            "reducescatter, alltoall, broadcast, reduce, sendrecv\n");
}

TEST(Cli, BadSizeAndCheckValue) {
  test::Run r = run_command(kPlumb + " comm -e 1Q");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --max-bytes: expected a byte count such as 8, 64K, 1M or 2G, got "
                   "'1Q'\n");
  test::Run c = run_command(kPlumb + " comm -c 2");
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("--check"), std::string::npos) << c.err;
}

TEST(Cli, BrokenClusterMapNamesFileAndLine) {
  const std::string dir = test::temp_dir("cli-map");
  test::write_file(dir + "/map.yaml", "racks:\n  - name: r0\n    nodes: [a, a]\n");
  test::Run r = run_command(kPlumb + " comm --cluster " + dir + "/map.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: " + dir + "/map.yaml:3: node 'a' is listed twice (first at line 3)\n");
}

TEST(Cli, UnwritableOutputFailsBeforeMeasuring) {
  test::Run r = run_command(kPlumb + " comm --json /nonexistent/dir/out.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --json /nonexistent/dir/out.json: cannot write: folder "
                   "/nonexistent/dir does not exist\n");
  EXPECT_EQ(r.out, "");
}

TEST(Cli, NcclBackendWithoutLibrariesIsOneLine) {
  test::Run r = run_command("PLUMB_NCCL_LIBRARY=/nonexistent/libnccl.so.2 " + kPlumb +
                            " comm --backend nccl");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: cannot load /nonexistent/libnccl.so.2 (/nonexistent/libnccl.so.2: "
                   "cannot open shared object file: No such file or directory); install NCCL "
                   "(libnccl2) or set PLUMB_NCCL_LIBRARY\n");
  test::Run c = run_command("PLUMB_CUDART_LIBRARY=/nonexistent/libcudart.so " + kPlumb +
                            " comm --backend nccl");
  EXPECT_EQ(c.exit_code, 2);
  // Whichever library is missing first is named; with NCCL present it is the CUDA runtime.
  EXPECT_NE(c.err.find("plumb: error: cannot load "), std::string::npos) << c.err;
}

// Where the real NCCL and CUDA runtime are installed but no GPU is (this project's CI machines
// carry CUDA 13 and NCCL without a driver), every symbol plumb uses resolves and the run stops at
// the device count with one line.
TEST(Cli, NcclBackendResolvesRealLibrariesWithoutAGpu) {
  void* nccl = dlopen("libnccl.so.2", RTLD_NOW);
  void* cudart = dlopen("libcudart.so", RTLD_NOW);
  const bool installed = nccl && cudart;
  if (nccl) dlclose(nccl);
  if (cudart) dlclose(cudart);
  if (!installed) GTEST_SKIP() << "NCCL or the CUDA runtime is not installed here";
  if (std::system("nvidia-smi -L >/dev/null 2>&1") == 0) GTEST_SKIP() << "a GPU is present";
  test::Run r = run_command(kPlumb + " comm --backend nccl");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("plumb: error: --backend nccl: no CUDA device is visible (", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line";
}

// The whole command over the NCCL backend, with stand-in libraries on host memory (one rank).
TEST(Cli, NcclBackendEndToEndWithStandInLibraries) {
  test::Run r = run_command(std::string("PLUMB_NCCL_LIBRARY=") + FAKE_NCCL_LIBRARY +
                            " PLUMB_CUDART_LIBRARY=" + FAKE_CUDART_LIBRARY + " " + kPlumb +
                            " comm --backend nccl -q -b 8 -e 64K -f 8 -d bfloat16 -o avg --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["backend"], "nccl");
  EXPECT_EQ(j["results"].size(), 7u * 5);  // 8 B .. 32 KiB by 8: 5 sizes
  for (const auto& row : j["results"]) EXPECT_EQ(row["wrong"], 0) << row.dump();
}

TEST(Cli, SingleRankExplainsHowToLaunch) {
  test::Run r = run_command(kPlumb + " comm -q -b 8 -e 8 --json -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("plumb: note: only 1 rank: no data crosses a link; start plumb under an "
                       "MPI launcher, e.g. mpirun -np 4 plumb comm"),
            std::string::npos)
      << r.err;
  // One rank still measures the world layer: what one device's collectives cost.
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 7u);
  for (const auto& row : j["results"]) {
    EXPECT_EQ(row["group_ranks"], 1);
    EXPECT_EQ(row["wrong"], 0);
    if (row["collective"] == "allreduce") {
      EXPECT_EQ(row["busbw_gbps"], 0.0);  // 2(n-1)/n = 0
    }
  }
}

}  // namespace
}  // namespace plumb

namespace plumb {
namespace {

TEST(EnvCli, WritesJsonAndListsOnTheConsole) {
  const std::string dir = test::temp_dir("env");
  test::Run r = test::run_command("NCCL_ALGO=Ring " + std::string(PLUMB_BIN) + " env --json " +
                                  dir + "/env.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# plumb env · host "), std::string::npos);
  EXPECT_NE(r.out.find("NCCL_ALGO=Ring"), std::string::npos);
  EXPECT_EQ(r.err, "plumb: wrote " + dir + "/env.json\n");
  const auto j = nlohmann::json::parse(test::read_file(dir + "/env.json"));
  EXPECT_EQ(j["schema"], "plumb.env/1");
  EXPECT_EQ(j["env"]["NCCL_ALGO"], "Ring");
  for (const char* key : {"os", "kernel", "cpu_model", "compiler", "glibc", "mpi", "nvidia_driver",
                          "cuda_runtime", "nccl", "ascend_driver", "cann", "torch", "torch_npu"}) {
    EXPECT_TRUE(j["versions"].contains(key)) << key;
  }
}

TEST(EnvCli, UnwritableJson) {
  test::Run r = test::run_command(std::string(PLUMB_BIN) + " env --json /nonexistent/env.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --json /nonexistent/env.json: cannot write: folder /nonexistent "
                   "does not exist\n");
}

}  // namespace
}  // namespace plumb
