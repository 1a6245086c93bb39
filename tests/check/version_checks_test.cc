#include <gtest/gtest.h>

#include "check/check.h"
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

// /proc/driver/nvidia/version as the NVIDIA driver writes it.
constexpr const char* kDriverVersion =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";

TEST(VersionChecks, ADriverOtherThanTheCheckFilesIsCritical) {
  const test::NodeTree tree("check_versions");
  tree.write("/proc/driver/nvidia/version", kDriverVersion);
  const CheckResult same = run("versions.software", tree.context(), "{expected: {nvidia_driver: 550.54.15}}");
  EXPECT_EQ(same.status, Status::kOk);
  EXPECT_EQ(same.value, "nvidia_driver 550.54.15");
  const CheckResult other = run("versions.software", tree.context(), "{expected: {nvidia_driver: 550.90.07}}");
  EXPECT_EQ(other.status, Status::kCritical);
  EXPECT_EQ(other.value, "nvidia_driver 550.54.15");
  EXPECT_EQ(other.expected, "nvidia_driver 550.90.07");
  EXPECT_EQ(run("versions.software", tree.context(),
                "{expected: {nvidia_driver: 550.90.07}, severity: warning}").status,
            Status::kWarning);
  EXPECT_EQ(run("versions.software", tree.context(), "{expected: {cann: 8.0.RC3}}").value, "cann (absent)");
  EXPECT_TRUE(run("versions.software", tree.context()).skipped);
}

TEST(VersionChecks, BadSectionsNameTheirKey) {
  const test::NodeTree tree("check_versions_bad");
  EXPECT_EQ(plumb::test::error_message([&] {
              run("versions.software", tree.context(), "{expected: {nvidia_drvier: 1}}");
            }),
            "checks.versions.software.expected: unknown version 'nvidia_drvier' (did you mean "
            "'nvidia_driver'?); expected one of os, kernel, nvidia_driver, cuda_runtime, nccl, "
            "ascend_driver, cann, mpi, python, torch, torch_cuda, torch_npu");
  EXPECT_EQ(plumb::test::error_message([&] {
              run("versions.env", tree.context(), "{expected: {A: b}, severity: high}");
            }),
            "site.yaml:1: checks.versions.env.severity: must be one of warning, critical, got 'high'");
}

TEST(VersionChecks, SettingsFromTheEnvironmentOverNcclConf) {
  const test::NodeTree tree("check_env");
  tree.write("/etc/nccl.conf", "# site defaults\nNCCL_IB_HCA=mlx5\nNCCL_ALGO = Ring\n");
  NodeContext ctx = tree.context();
  ctx.environment = {{"HCCL_ALGO", "level0:NA;level1:ring"}};
  const CheckResult r = run("versions.env", ctx,
                            "{expected: {HCCL_ALGO: 'level0:NA;level1:H-D_R', NCCL_IB_HCA: mlx5}, "
                            "absent: [NCCL_ALGO]}");
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "HCCL_ALGO level0:NA;level1:ring; NCCL_ALGO=Ring");
  EXPECT_EQ(r.expected, "HCCL_ALGO level0:NA;level1:H-D_R; NCCL_ALGO unset");
  ctx.environment["HCCL_ALGO"] = "level0:NA;level1:H-D_R";
  ctx.environment["NCCL_IB_HCA"] = "mlx5_0,mlx5_1";  // the environment wins over the file
  EXPECT_EQ(run("versions.env", ctx, "{expected: {NCCL_IB_HCA: mlx5}}").value, "NCCL_IB_HCA mlx5_0,mlx5_1");
}

TEST(VersionChecks, FirmwarePerHca) {
  const test::NodeTree tree("check_firmware");
  tree.write("/sys/class/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
  tree.write("/sys/class/infiniband/mlx5_1/fw_ver", "28.36.1010\n");
  const CheckResult r =
      run("versions.firmware", tree.context(), "{expected: {mlx5_0: 28.39.1002, mlx5_1: 28.39.1002}}");
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "mlx5_1 28.36.1010");
  EXPECT_EQ(r.expected, "mlx5_1 28.39.1002");
}

}  // namespace
}  // namespace plumb::check
