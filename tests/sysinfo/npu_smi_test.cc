// The `npu-smi info` parser against real output (tests/fixtures/run/npu-smi, README there).
#include "sysinfo/npu_smi.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/subprocess.h"

namespace plumb::sysinfo {
namespace {

const std::string kNpuInfo = std::string(PLUMB_TEST_FIXTURES) + "/run/npu-smi";

std::string line_of(const std::string& text, size_t index) {
  size_t start = 0;
  for (size_t i = 0; i < index; ++i) start = text.find('\n', start) + 1;
  return text.substr(start, text.find('\n', start) - start);
}

// ---- npu-smi info

TEST(NpuSmiInfo, ReadsThe910B2TableOneChipPerNpu) {
  const NpuSmiInfo info =
      parse_npu_smi_info(test::read_file(kNpuInfo + "/info_8x910B2_23.0.7_excerpt.txt"));
  ASSERT_EQ(info.chips.size(), 2u);
  EXPECT_EQ(info.chips[0].npu_id, 0);
  EXPECT_EQ(info.chips[0].chip_id, 0);
  EXPECT_EQ(info.chips[0].logical_id, 0);
  EXPECT_EQ(info.chips[0].name, "910B2");
  EXPECT_EQ(info.chips[0].health, "OK");
  EXPECT_EQ(info.chips[0].bus_id, "0000:C1:00.0");
  EXPECT_EQ(info.chips[1].npu_id, 1);
  EXPECT_EQ(info.chips[1].chip_id, 0);
  EXPECT_EQ(info.chips[1].logical_id, 1);
  EXPECT_EQ(info.chips[1].bus_id, "0000:01:00.0");
  EXPECT_TRUE(info.processes.empty());
}

TEST(NpuSmiInfo, ReadsTheA3TableTwoChipsPerNpuAndItsProcess) {
  const NpuSmiInfo info =
      parse_npu_smi_info(test::read_file(kNpuInfo + "/info_A3_25.2.0_excerpt.txt"));
  ASSERT_EQ(info.chips.size(), 2u);
  EXPECT_EQ(info.chips[0].npu_id, 0);
  EXPECT_EQ(info.chips[0].chip_id, 0);
  EXPECT_EQ(info.chips[0].bus_id, "0000:9C:00.0");
  EXPECT_EQ(info.chips[1].npu_id, 0);
  EXPECT_EQ(info.chips[1].chip_id, 1);
  EXPECT_EQ(info.chips[1].logical_id, 1);
  EXPECT_EQ(info.chips[1].name, "Ascend910");
  EXPECT_EQ(info.chips[1].bus_id, "0000:9E:00.0");
  ASSERT_EQ(info.processes.size(), 1u);
  EXPECT_EQ(info.processes[0].npu_id, 1);
  EXPECT_EQ(info.processes[0].chip_id, 1);
  EXPECT_EQ(info.processes[0].pid, 990711);
  EXPECT_EQ(info.processes[0].name, "python");
}

TEST(NpuSmiInfo, TheKeyValueFormHasNoDeviceTable) {
  EXPECT_EQ(test::error_message([] {
              parse_npu_smi_info(test::read_file(kNpuInfo + "/info_t_common.txt"));
            }),
            "npu-smi info: no device table (expected a header row 'NPU  Name | Health | ...')");
}

TEST(NpuSmiInfo, ABadNpuRowIsNamedByItsLine) {
  std::string text = test::read_file(kNpuInfo + "/info_8x910B2_23.0.7_excerpt.txt");
  const std::string row = "| 0     910B2               | OK            |";
  text.replace(text.find(row), row.size(), "| x     910B2               | OK            |");
  const std::string line = line_of(text, 6);
  EXPECT_EQ(test::error_message([&] { parse_npu_smi_info(text); }),
            "npu-smi info: line 7: expected an NPU row: 'NPU-ID  Name | Health | ...', got '" +
                line + "'");
}

TEST(NpuSmiInfo, AnNpuRowWithoutItsChipRowIsAnError) {
  const std::string text =
      "| NPU   Name  | Health | Power |\n+====+====+====+\n| 3  910B2 | OK | 90 |\n+====+====+\n";
  EXPECT_EQ(test::error_message([&] { parse_npu_smi_info(text); }),
            "npu-smi info: line 4: expected the Chip row under the NPU row, got '+====+====+'");
}

}  // namespace
}  // namespace plumb::sysinfo
