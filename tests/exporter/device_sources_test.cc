// The nvidia-smi and npu-smi device sources: readings from the real fixtures in base units, the
// families and their labels, and the tool run through the stand-ins in tests/fixtures/exporter/bin.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>

#include <string>

#include "exporter/npu_smi_source.h"
#include "exporter/nvidia_smi_source.h"
#include "exporter/series.h"
#include "families_helpers.h"
#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

const std::string kDir = std::string(PLUMB_TEST_FIXTURES) + "/exporter";
const std::string kNpuDir = std::string(PLUMB_TEST_FIXTURES) + "/run/npu-smi";
const std::string kFakeNvidia = kDir + "/bin/nvidia-smi";
const std::string kFakeNpu = kDir + "/bin/npu-smi";

using test::value_of;

// Points a stand-in at a file for one test.
class FakeFile {
 public:
  FakeFile(const char* variable, const std::string& path) : variable_(variable) {
    setenv(variable, path.c_str(), 1);
  }
  ~FakeFile() { unsetenv(variable_); }

 private:
  const char* variable_;
};

std::string write_fake(const std::string& name, const std::string& text) {
  const std::string path = plumb::test::temp_dir("device_sources_" + name) + "/" + name;
  plumb::test::write_file(path, text);
  return path;
}

TEST(NvidiaReadings, MebibytesBecomeBytesAndPercentARatio) {
  const std::vector<DeviceReading> r = nvidia_readings(
      sysinfo::parse_nvidia_smi_csv(plumb::test::read_file(kDir + "/query_gpu_rtx2060.csv")));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].device, "0");
  EXPECT_EQ(r[0].vendor, "nvidia");
  EXPECT_EQ(r[0].model, "GeForce RTX 2060");
  EXPECT_EQ(r[0].hbm_used_bytes, 682.0 * 1048576);   // 715128832
  EXPECT_EQ(r[0].hbm_total_bytes, 5934.0 * 1048576);  // 6222249984
  EXPECT_EQ(r[0].utilization_ratio, 0.2);
  EXPECT_EQ(r[0].temperature_celsius, 36.0);
  EXPECT_FALSE(r[0].power_watts.has_value());
  EXPECT_EQ(r[0].healthy, true);
}

TEST(NpuReadings, TheA3BoardIsLabelledNpuChipAndChip1HasNoPower) {
  const std::vector<DeviceReading> r = npu_readings(sysinfo::parse_npu_smi_info(
      plumb::test::read_file(kNpuDir + "/info_A3_25.2.0_excerpt.txt")));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].device, "0-0");
  EXPECT_EQ(r[1].device, "0-1");
  EXPECT_EQ(r[0].model, "Ascend910");
  EXPECT_EQ(r[0].power_watts, 162.8);
  EXPECT_FALSE(r[1].power_watts.has_value());
  EXPECT_EQ(r[1].hbm_used_bytes, 2876.0 * 1048576);
  EXPECT_EQ(r[1].hbm_total_bytes, 65536.0 * 1048576);  // 64 GiB
}

TEST(NpuReadings, The910B2IsLabelledByNpuId) {
  const std::vector<DeviceReading> r = npu_readings(sysinfo::parse_npu_smi_info(
      plumb::test::read_file(kNpuDir + "/info_8x910B2_23.0.7_excerpt.txt")));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].device, "1");
  EXPECT_EQ(r[1].utilization_ratio, 0.0);
  EXPECT_EQ(r[1].temperature_celsius, 37.0);
  EXPECT_EQ(r[1].healthy, true);
}

TEST(DeviceFamilies, AnAbsentValueIsNoSampleAndLabelsComeInOrder) {
  FakeFile fake("PLUMB_FAKE_NVIDIA_SMI", kDir + "/query_gpu_rtx2060.csv");
  const Families f = NvidiaSmiSource({"h1", kFakeNvidia, 5, 5, {}, {}}).collect();
  const Family* power = test::family_of(f, series::kPower);
  EXPECT_EQ(power, nullptr);  // no GPU reported a power: no family, never a 0
  const Family* used = test::family_of(f, series::kHbmUsed);
  ASSERT_NE(used, nullptr);
  EXPECT_EQ(used->type, "gauge");
  ASSERT_EQ(used->samples.size(), 1u);
  EXPECT_EQ(used->samples[0].labels, (Labels{{"host", "h1"}, {"device", "0"},
                                            {"vendor", "nvidia"}, {"model", "GeForce RTX 2060"}}));
  EXPECT_EQ(used->samples[0].value, 715128832.0);
}

TEST(NvidiaSmiSource, ReadsTheStandInsDefaultRealH200Output) {
  const Families f = NvidiaSmiSource({"h1", kFakeNvidia, 5, 5, {}, {}}).collect();
  const Labels h200{{"host", "h1"}, {"device", "0"}, {"vendor", "nvidia"}, {"model", "NVIDIA H200"}};
  EXPECT_EQ(value_of(f, series::kHbmUsed, h200), 0.0);  // an idle GPU: a real 0, not an absence
  EXPECT_EQ(value_of(f, series::kHbmTotal, h200), 143771.0 * 1048576);
  EXPECT_EQ(value_of(f, series::kPower, h200), 81.07);
  EXPECT_EQ(value_of(f, series::kTemperature, h200), 37.0);
  EXPECT_EQ(value_of(f, series::kUtilization, h200), 0.0);
  EXPECT_EQ(value_of(f, series::kHealthy, h200), 1.0);
}

TEST(NvidiaSmiSource, ReadsTheStandInsFileWithAnUnhealthyGpu) {
  FakeFile fake("PLUMB_FAKE_NVIDIA_SMI", kDir + "/query_gpu_full_constructed.csv");
  const Families f = NvidiaSmiSource({"h1", kFakeNvidia, 5, 5, {}, {}}).collect();
  EXPECT_EQ(value_of(f, series::kTemperature, {{"device", "0"}}), 88.0);
  EXPECT_EQ(value_of(f, series::kPower, {{"device", "0"}}), 650.25);
  EXPECT_EQ(value_of(f, series::kUtilization, {{"device", "0"}}), 1.0);
  EXPECT_EQ(value_of(f, series::kHbmUsed, {{"device", "0"}}), 77000.0 * 1048576);
  EXPECT_FALSE(value_of(f, series::kPower, {{"device", "1"}}).has_value());
  EXPECT_EQ(value_of(f, series::kHealthy, {{"device", "1"}}), 1.0);
  EXPECT_EQ(value_of(f, series::kHealthy, {{"device", "3"}}), 0.0);
  EXPECT_FALSE(value_of(f, series::kHbmUsed, {{"device", "3"}}).has_value());
}

TEST(NpuSmiSource, ReadsTheStandInsDefaultTable) {
  const Families f = NpuSmiSource({"h2", kFakeNpu, 5, 5, {}, {}}).collect();
  EXPECT_EQ(value_of(f, series::kPower, {{"host", "h2"}, {"device", "0"}, {"vendor", "ascend"},
                                         {"model", "910B2"}}),
            96.5);
  EXPECT_EQ(value_of(f, series::kHbmUsed, {{"device", "1"}}), 29951.0 * 1048576);
  EXPECT_EQ(value_of(f, series::kHealthy, {{"device", "1"}}), 1.0);
}

// Issue 28: a value no device can report is left out (the device's other values stay), counted
// in plumb_exporter_source_malformed_total and logged.
TEST(DeviceSources, ImpossibleValuesAreLeftOutCountedAndLogged) {
  FakeFile fake("PLUMB_FAKE_NVIDIA_SMI",
                write_fake("impossible",
                           "index, name, memory.used [MiB], memory.total [MiB], temperature.gpu, "
                           "power.draw [W], utilization.gpu [%]\n"
                           "0, NVIDIA H100 80GB HBM3, 90000 MiB, 81559 MiB, 1e300, 650.25 W, 250 %\n"
                           "1, NVIDIA H100 80GB HBM3, 1024 MiB, 81559 MiB, 34, -5 W, 0 %\n"));
  std::vector<std::string> logged;
  NvidiaSmiSource source({"h1", kFakeNvidia, 5, 5,
                          [&](const std::string& line) { logged.push_back(line); },
                          [] { return 1000.0; }});
  const Families f = source.collect();
  EXPECT_FALSE(value_of(f, series::kTemperature, {{"device", "0"}}).has_value());
  EXPECT_FALSE(value_of(f, series::kUtilization, {{"device", "0"}}).has_value());
  EXPECT_FALSE(value_of(f, series::kHbmUsed, {{"device", "0"}}).has_value());
  EXPECT_FALSE(value_of(f, series::kHbmTotal, {{"device", "0"}}).has_value());
  EXPECT_EQ(value_of(f, series::kPower, {{"device", "0"}}), 650.25);
  EXPECT_FALSE(value_of(f, series::kPower, {{"device", "1"}}).has_value());
  EXPECT_EQ(value_of(f, series::kTemperature, {{"device", "1"}}), 34.0);
  EXPECT_EQ(value_of(f, series::kSourceMalformed, {{"host", "h1"}, {"source", "nvidia-smi"}}), 4);
  EXPECT_EQ(logged, std::vector<std::string>{"nvidia-smi: device 0: temperature 1e+300 °C, "
                                             "expected -273.15 to 200 (and 3 more refused "
                                             "value(s) since)"});

  std::vector<DeviceReading> readings = nvidia_readings(sysinfo::parse_nvidia_smi_csv(
      plumb::test::read_file(std::getenv("PLUMB_FAKE_NVIDIA_SMI"))));
  EXPECT_EQ(refuse_impossible(readings, "nvidia-smi"),
            (std::vector<std::string>{
                "nvidia-smi: device 0: temperature 1e+300 °C, expected -273.15 to 200",
                "nvidia-smi: device 0: utilization 2.5, expected 0 to 1",
                "nvidia-smi: device 0: HBM used 94371840000 bytes is more than its total "
                "85520809984 bytes; both left out",
                "nvidia-smi: device 1: power -5 W, expected 0 to 10000"}));
}

TEST(DeviceSources, RealReadingsAreNeverRefused) {
  const Families f = NvidiaSmiSource({"h1", kFakeNvidia, 5, 5, {}, {}}).collect();
  EXPECT_EQ(value_of(f, series::kSourceMalformed, {{"source", "nvidia-smi"}}), 0);
  const Families npu = NpuSmiSource({"h2", kFakeNpu, 5, 5, {}, {}}).collect();
  EXPECT_EQ(value_of(npu, series::kSourceMalformed, {{"source", "npu-smi"}}), 0);
}

TEST(DeviceSources, AToolThatHangsIsStoppedAtTheTimeout) {
  FakeFile nvidia("PLUMB_FAKE_NVIDIA_SMI", write_fake("hang", "#hang\n"));
  EXPECT_EQ(plumb::test::error_message(
                [] { NvidiaSmiSource({"h", kFakeNvidia, 5, 0.3, {}, {}}).collect(); }),
            "nvidia-smi: no answer within 0.3 s");
}

TEST(DeviceSources, AToolThatFailsOrPrintsGarbageIsOneMessage) {
  FakeFile npu("PLUMB_FAKE_NPU_SMI", write_fake("exit9", "#exit 9\n"));
  EXPECT_EQ(plumb::test::error_message(
                [] { NpuSmiSource({"h", kFakeNpu, 5, 5, {}, {}}).collect(); }),
            "npu-smi: exit 9");
  FakeFile garbage("PLUMB_FAKE_NPU_SMI", write_fake("garbage", "#garbage\n"));
  EXPECT_EQ(plumb::test::error_message(
                [] { NpuSmiSource({"h", kFakeNpu, 5, 5, {}, {}}).collect(); }),
            "npu-smi info: no device table (expected a header row 'NPU  Name | Health | ...')");
  FakeFile nvidia("PLUMB_FAKE_NVIDIA_SMI", write_fake("garbage", "#garbage\n"));
  EXPECT_EQ(plumb::test::error_message(
                [] { NvidiaSmiSource({"h", kFakeNvidia, 5, 5, {}, {}}).collect(); }),
            "nvidia-smi: line 1: expected a header of column names ('index, name, memory.used "
            "[MiB], ...': run with --format=csv, not noheader), got '\\x1b[31mSegmentation \\x01 "
            "fault \\xff in libnvidia-ml'");
  FakeFile empty("PLUMB_FAKE_NVIDIA_SMI", write_fake("header_only", "index, name\n"));
  EXPECT_EQ(plumb::test::error_message(
                [] { NvidiaSmiSource({"h", kFakeNvidia, 5, 5, {}, {}}).collect(); }),
            "nvidia-smi: printed no device table (a header and no GPU rows)");
  EXPECT_EQ(plumb::test::error_message([] {
              NvidiaSmiSource({"h", "/nonexistent/nvidia-smi", 5, 5, {}, {}}).collect();
            }),
            "nvidia-smi: could not be started ('/nonexistent/nvidia-smi': exit 127)");
}

}  // namespace
}  // namespace plumb::exporter
