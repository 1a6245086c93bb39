#include "sysinfo/version_text.h"

#include <gtest/gtest.h>

#include "support/subprocess.h"

namespace plumb::sysinfo {
namespace {

std::string fixture(const std::string& path) {
  return test::read_file(std::string(PLUMB_TEST_FIXTURES) + "/sysinfo/root/" + path);
}

TEST(VersionText, OsRelease) {
  EXPECT_EQ(os_pretty_name(fixture("etc/os-release")), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(os_pretty_name("NAME=x\nPRETTY_NAME='EulerOS 2.0 (SP12)'\n"), "EulerOS 2.0 (SP12)");
  EXPECT_EQ(os_pretty_name("NAME=x\n"), std::nullopt);
}

TEST(VersionText, CpuInfo) {
  EXPECT_EQ(cpu_model(fixture("proc/cpuinfo")), "0xd01");  // aarch64: no "model name"
  EXPECT_EQ(cpu_count(fixture("proc/cpuinfo")), 2);
  EXPECT_EQ(cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7763 64-Core Processor\n"),
            "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(cpu_model(""), std::nullopt);
}

TEST(VersionText, NvidiaDriver) {
  EXPECT_EQ(nvidia_driver_version(fixture("proc/driver/nvidia/version")), "535.104.05");
  EXPECT_EQ(nvidia_driver_version("NVRM version: something else"), std::nullopt);
  EXPECT_EQ(nvidia_driver_version("Kernel Module"), std::nullopt);
}

TEST(VersionText, AscendFiles) {
  EXPECT_EQ(key_value(fixture("usr/local/Ascend/driver/version.info"), "Version"), "23.0.7");
  EXPECT_EQ(key_value(fixture("usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/"
                              "ascend_toolkit_install.info"),
                      "version"),
            "8.0.RC1");
  EXPECT_EQ(key_value("version=\n", "version"), std::nullopt);
}

TEST(VersionText, LibraryCodes) {
  EXPECT_EQ(nccl_version(22902), "2.29.2");
  EXPECT_EQ(nccl_version(21803), "2.18.3");
  EXPECT_EQ(nccl_version(2804), "2.8.4");  // before 2.9: major·1000 + minor·100 + patch
  EXPECT_EQ(cuda_version(12040), "12.4");
  EXPECT_EQ(cuda_version(13000), "13.0");
}

}  // namespace
}  // namespace plumb::sysinfo
