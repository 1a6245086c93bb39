#include "sysinfo/system_info.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/env_reporter.h"

namespace plumb::sysinfo {
namespace {

const std::string kFixtures = std::string(PLUMB_TEST_FIXTURES) + "/sysinfo";

ProbeContext mirrored() {
  ProbeContext c;
  c.root = kFixtures + "/root";
  c.python = kFixtures + "/fake-python";
  c.cudart_names = {FAKE_CUDART_LIBRARY};
  c.nccl_names = {FAKE_NCCL_LIBRARY};
  c.environment = {"NCCL_IB_HCA=mlx5_0", "HCCL_BUFFSIZE=200", "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
                   "HOME=/root", "MASTER_ADDR=10.0.0.1", "HCCL_SECRET_KEY=x"};
  return c;
}

std::optional<std::string> value(const EnvRecord& r, std::string_view name) {
  const Item* item = r.find(name);
  return item ? item->value : std::optional<std::string>("<no such item>");
}

TEST(CollectEnv, ReadsEveryProbeFromAMirroredMachine) {
  const EnvRecord r = collect_env(mirrored());
  EXPECT_EQ(value(r, "os"), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(value(r, "kernel"), "5.10.0-136.12.0.86.h1130.eulerosv2r12.aarch64");
  EXPECT_EQ(value(r, "cpu_count"), "2");
  EXPECT_EQ(value(r, "nvidia_driver"), "535.104.05");
  EXPECT_EQ(value(r, "cuda_runtime"), "12.4");   // the stand-in's cudaRuntimeGetVersion
  EXPECT_EQ(value(r, "nccl"), "2.20.0");          // the stand-in's ncclGetVersion
  EXPECT_EQ(value(r, "ascend_driver"), "23.0.7");
  EXPECT_EQ(value(r, "cann"), "8.0.RC1");
  EXPECT_EQ(r.find("cann")->source,
            "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info");
  EXPECT_EQ(value(r, "torch"), "2.1.0");
  EXPECT_EQ(value(r, "torch_cuda"), std::nullopt);  // JSON null: a CPU/NPU build
  EXPECT_EQ(value(r, "torch_npu"), "2.1.0.post3");
  EXPECT_EQ(value(r, "python"), "3.10.14");
  EXPECT_NE(value(r, "mpi")->find("Open MPI"), std::string::npos);
  EXPECT_NE(value(r, "glibc"), std::nullopt);
  const std::map<std::string, std::string> env = {{"HCCL_BUFFSIZE", "200"},
                                                  {"HCCL_SECRET_KEY", "<redacted>"},
                                                  {"MASTER_ADDR", "10.0.0.1"},
                                                  {"NCCL_IB_HCA", "mlx5_0"},
                                                  {"PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True"}};
  EXPECT_EQ(r.env, env);
}

TEST(CollectEnv, MissingThingsAreFindingsNotErrors) {
  ProbeContext c = mirrored();
  c.root = kFixtures + "/nonexistent";
  c.cudart_names = {"/nonexistent/libcudart.so"};
  c.nccl_names = {"/nonexistent/libnccl.so.2"};
  c.python = "/nonexistent/python3";
  const EnvRecord r = collect_env(c);
  EXPECT_EQ(value(r, "os"), std::nullopt);
  EXPECT_EQ(value(r, "nccl"), std::nullopt);
  EXPECT_EQ(r.find("nccl")->source, "not installed");
  EXPECT_EQ(value(r, "cann"), std::nullopt);
  EXPECT_EQ(value(r, "torch"), std::nullopt);
  EXPECT_EQ(r.find("torch")->source, "/nonexistent/python3: exit code 127");
}

TEST(CollectEnv, PythonThatHangsIsCutOff) {
  ProbeContext c = mirrored();
  c.python = kFixtures + "/slow-python";
  c.python_timeout_s = 0.5;
  const EnvRecord r = collect_env(c);
  EXPECT_EQ(value(r, "torch"), std::nullopt);
  EXPECT_EQ(r.find("torch")->source, kFixtures + "/slow-python: no answer within 0.5 s");
}

TEST(EnvJson, SchemaAndStableKeys) {
  const EnvRecord r = collect_env(mirrored());
  const nlohmann::json j = report::env_record_json(r);
  EXPECT_EQ(j["schema"], "plumb.env/1");
  EXPECT_EQ(j["versions"]["cann"], "8.0.RC1");
  EXPECT_TRUE(j["versions"]["torch_cuda"].is_null());
  EXPECT_EQ(j["sources"]["nvidia_driver"], "/proc/driver/nvidia/version");
  EXPECT_EQ(j["env"]["HCCL_BUFFSIZE"], "200");
  EXPECT_EQ(j["versions"].size(), r.items.size());
  std::ostringstream console;
  report::EnvConsoleReporter().report(r, console);
  EXPECT_NE(console.str().find("cann           8.0.RC1"), std::string::npos) << console.str();
}

}  // namespace
}  // namespace plumb::sysinfo
