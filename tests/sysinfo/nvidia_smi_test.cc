// The nvidia-smi CSV parser against real output (tests/fixtures/exporter, README there).
#include "sysinfo/nvidia_smi.h"

#include <gtest/gtest.h>

#include <string>

#include "support/subprocess.h"

namespace plumb::sysinfo {
namespace {

const std::string kDir = std::string(PLUMB_TEST_FIXTURES) + "/exporter";

TEST(NvidiaSmiCsv, ReadsTheRtx2060ColumnsByName) {
  const std::vector<NvidiaGpu> gpus =
      parse_nvidia_smi_csv(test::read_file(kDir + "/query_gpu_rtx2060.csv"));
  ASSERT_EQ(gpus.size(), 1u);
  const NvidiaGpu& gpu = gpus[0];
  EXPECT_FALSE(gpu.index.has_value());  // not queried: the row's position is the device
  EXPECT_EQ(device_label(gpu), "0");
  EXPECT_EQ(gpu.name, "GeForce RTX 2060");
  EXPECT_EQ(gpu.pci_bus_id, "00000000:09:00.0");
  EXPECT_EQ(gpu.utilization_percent, 20.0);
  EXPECT_EQ(gpu.memory_utilization_percent, 8.0);
  EXPECT_EQ(gpu.memory_total_mib, 5934.0);
  EXPECT_EQ(gpu.memory_free_mib, 5252.0);
  EXPECT_EQ(gpu.memory_used_mib, 682.0);
  EXPECT_EQ(gpu.temperature_celsius, 36.0);
  EXPECT_FALSE(gpu.power_watts.has_value());
  EXPECT_TRUE(gpu.healthy);
}

// plumb's own query on a real H200, with units and without.
TEST(NvidiaSmiCsv, ReadsPlumbsQueryOnAnH200InBothForms) {
  for (const char* file : {"/query_gpu_h200.csv", "/query_gpu_h200_nounits.csv"}) {
    const std::vector<NvidiaGpu> gpus = parse_nvidia_smi_csv(test::read_file(kDir + file));
    ASSERT_EQ(gpus.size(), 1u) << file;
    EXPECT_EQ(gpus[0].index, 0);
    EXPECT_EQ(gpus[0].uuid, "GPU-59f6e878-9c3d-308c-4aa9-c707f0ccfc6b");
    EXPECT_EQ(gpus[0].name, "NVIDIA H200");
    EXPECT_EQ(gpus[0].memory_used_mib, 0.0);
    EXPECT_EQ(gpus[0].memory_total_mib, 143771.0);
    EXPECT_EQ(gpus[0].temperature_celsius, 37.0);
    EXPECT_EQ(gpus[0].utilization_percent, 0.0);
    EXPECT_TRUE(gpus[0].healthy);
  }
  EXPECT_EQ(parse_nvidia_smi_csv(test::read_file(kDir + "/query_gpu_h200.csv"))[0].power_watts,
            81.07);
  EXPECT_EQ(
      parse_nvidia_smi_csv(test::read_file(kDir + "/query_gpu_h200_nounits.csv"))[0].power_watts,
      81.06);
}

TEST(NvidiaSmiCsv, ReadsTheA100SubsetWithItsIndex) {
  const std::vector<NvidiaGpu> gpus =
      parse_nvidia_smi_csv(test::read_file(kDir + "/query_gpu_4xA100.csv"));
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[3].index, 3);
  EXPECT_EQ(device_label(gpus[3]), "3");
  EXPECT_EQ(gpus[3].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpus[3].memory_total_mib, 81920.0);
  EXPECT_FALSE(gpus[3].memory_used_mib.has_value());
  EXPECT_FALSE(gpus[3].temperature_celsius.has_value());
}

TEST(NvidiaSmiCsv, NotAvailableIsAbsentAndResetMeansUnhealthy) {
  const std::vector<NvidiaGpu> gpus =
      parse_nvidia_smi_csv(test::read_file(kDir + "/query_gpu_full_constructed.csv"));
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].uuid, "GPU-6a4f9c3e-1b2d-4e8f-9a7c-0d1e2f3a4b5c");
  EXPECT_EQ(gpus[0].power_watts, 650.25);
  EXPECT_EQ(gpus[0].utilization_percent, 100.0);
  EXPECT_EQ(gpus[0].memory_used_mib, 77000.0);
  EXPECT_FALSE(gpus[1].power_watts.has_value());  // [N/A]
  EXPECT_TRUE(gpus[1].healthy);
  EXPECT_EQ(gpus[2].index, 3);
  EXPECT_FALSE(gpus[2].healthy);  // [GPU requires reset]
  EXPECT_FALSE(gpus[2].memory_used_mib.has_value());
  EXPECT_FALSE(gpus[2].temperature_celsius.has_value());
}

TEST(NvidiaSmiCsv, ReadsTheNounitsForm) {
  const std::vector<NvidiaGpu> gpus =
      parse_nvidia_smi_csv(test::read_file(kDir + "/query_gpu_nounits_constructed.csv"));
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].memory_used_mib, 682.0);
  EXPECT_EQ(gpus[0].power_watts, 61.52);
  EXPECT_EQ(gpus[0].utilization_percent, 20.0);
  EXPECT_FALSE(gpus[1].memory_used_mib.has_value());      // [Not Supported]
  EXPECT_FALSE(gpus[1].temperature_celsius.has_value());  // N/A
  EXPECT_FALSE(gpus[1].healthy);                          // [Unknown Error]
  EXPECT_EQ(gpus[1].utilization_percent, 7.0);
}

TEST(NvidiaSmiCsv, ErrorsNameTheLineAndColumn) {
  EXPECT_EQ(test::error_message([] {
              parse_nvidia_smi_csv("index, memory.used [MiB]\n0, 1 MiB\n1, abc\n");
            }),
            "nvidia-smi: line 3: 'memory.used' is 'abc', expected a number with MiB");
  EXPECT_EQ(test::error_message([] { parse_nvidia_smi_csv("temperature.gpu\nwarm\n"); }),
            "nvidia-smi: line 2: 'temperature.gpu' is 'warm', expected a number");
  EXPECT_EQ(test::error_message([] { parse_nvidia_smi_csv("name, index\nA100, -1\n"); }),
            "nvidia-smi: line 2: 'index' is '-1', expected a whole number");
  EXPECT_EQ(test::error_message([] { parse_nvidia_smi_csv("index, name\n0, A100, extra\n"); }),
            "nvidia-smi: line 2: 3 values, expected 2 (one per column of the header), got "
            "'0, A100, extra'");
  EXPECT_EQ(test::error_message([] { parse_nvidia_smi_csv("0, NVIDIA A100, 81920 MiB\n"); }),
            "nvidia-smi: line 1: expected a header of column names ('index, name, memory.used "
            "[MiB], ...': run with --format=csv, not noheader), got '0, NVIDIA A100, 81920 MiB'");
  EXPECT_EQ(test::error_message([] { parse_nvidia_smi_csv("\n\n"); }),
            "nvidia-smi: printed nothing (expected a CSV header and rows)");
}

}  // namespace
}  // namespace plumb::sysinfo
