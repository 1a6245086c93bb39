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

// ---- the figures of the device table

TEST(NpuSmiInfo, ReadsEveryFigureOfThe910B2Table) {
  const NpuSmiInfo info =
      parse_npu_smi_info(test::read_file(kNpuInfo + "/info_8x910B2_23.0.7_excerpt.txt"));
  ASSERT_EQ(info.chips.size(), 2u);
  const NpuChip& chip = info.chips[0];
  EXPECT_EQ(chip.power_watts, 96.5);
  EXPECT_EQ(chip.temperature_celsius, 36.0);
  ASSERT_TRUE(chip.hugepages_pages);
  EXPECT_EQ(chip.hugepages_pages->used, 0.0);
  EXPECT_EQ(chip.hugepages_pages->total, 0.0);
  EXPECT_EQ(chip.aicore_percent, 0.0);
  ASSERT_TRUE(chip.memory_mib);
  EXPECT_EQ(chip.memory_mib->total, 0.0);
  ASSERT_TRUE(chip.hbm_mib);  // "29954/ 65536": no space before the slash
  EXPECT_EQ(chip.hbm_mib->used, 29954.0);
  EXPECT_EQ(chip.hbm_mib->total, 65536.0);
  EXPECT_EQ(info.chips[1].power_watts, 98.7);
  EXPECT_EQ(info.chips[1].temperature_celsius, 37.0);
  EXPECT_EQ(info.chips[1].hbm_mib->used, 29951.0);
}

TEST(NpuSmiInfo, TheA3SecondChipHasNoPowerOfItsOwn) {
  const NpuSmiInfo info =
      parse_npu_smi_info(test::read_file(kNpuInfo + "/info_A3_25.2.0_excerpt.txt"));
  ASSERT_EQ(info.chips.size(), 2u);
  EXPECT_EQ(info.chips[0].power_watts, 162.8);
  EXPECT_EQ(info.chips[0].hbm_mib->used, 3133.0);  // "3133 / 65536": spaces on both sides
  EXPECT_EQ(info.chips[0].hbm_mib->total, 65536.0);
  EXPECT_FALSE(info.chips[1].power_watts.has_value());  // '-'
  EXPECT_EQ(info.chips[1].temperature_celsius, 37.0);
  EXPECT_EQ(info.chips[1].hbm_mib->used, 2876.0);
  EXPECT_EQ(info.chips[1].health, "OK");
}

TEST(NpuSmiInfo, AColumnTheHeaderDoesNotNameIsAbsent) {
  const std::string text =
      "| NPU  Name | Health | Power(W) |\n| Chip | Bus-Id | AICore(%) |\n+===+===+===+\n"
      "| 2  910A | Warning | 70.25 |\n| 0 | 0000:01:00.0 | 41 |\n+===+===+===+\n";
  const NpuSmiInfo info = parse_npu_smi_info(text);
  ASSERT_EQ(info.chips.size(), 1u);
  EXPECT_EQ(info.chips[0].npu_id, 2);
  EXPECT_EQ(info.chips[0].health, "Warning");
  EXPECT_EQ(info.chips[0].power_watts, 70.25);
  EXPECT_EQ(info.chips[0].aicore_percent, 41.0);
  EXPECT_FALSE(info.chips[0].temperature_celsius.has_value());
  EXPECT_FALSE(info.chips[0].hbm_mib.has_value());
}

TEST(NpuSmiInfo, AFigureThatIsNotANumberIsNamedByLineAndColumn) {
  std::string text = test::read_file(kNpuInfo + "/info_8x910B2_23.0.7_excerpt.txt");
  text.replace(text.find("29951/ 65536"), 12, "29951/ lots ");
  EXPECT_EQ(test::error_message([&] { parse_npu_smi_info(text); }),
            "npu-smi info: line 11: 'HBM-Usage(MB)' is '29951/lots', expected 'used / total'");
  text = test::read_file(kNpuInfo + "/info_8x910B2_23.0.7_excerpt.txt");
  text.replace(text.find("96.5"), 4, "hot!");
  EXPECT_EQ(test::error_message([&] { parse_npu_smi_info(text); }),
            "npu-smi info: line 7: 'Power(W)' is 'hot!', expected a number");
}

TEST(NpuSmiInfo, ARowWithAFigureMissingIsAnError) {
  std::string text = test::read_file(kNpuInfo + "/info_8x910B2_23.0.7_excerpt.txt");
  const std::string row = "| 1     910B2               | OK            | 98.7        37   ";
  text.replace(text.find(row), row.size(), "| 1     910B2               | OK            | 98.7             ");
  const std::string line = line_of(text, 9);
  EXPECT_EQ(test::error_message([&] { parse_npu_smi_info(text); }),
            "npu-smi info: line 10: expected 3 figure(s) under 'Power(W) Temp(C) "
            "Hugepages-Usage(page)', got '" + line + "'");
}

// ---- npu-smi info -t common -i N

TEST(NpuSmiCommon, ReadsTheKeyValueForm) {
  const NpuCommonInfo info = parse_npu_smi_common(test::read_file(kNpuInfo + "/info_t_common.txt"));
  EXPECT_EQ(info.npu_id, 0);
  EXPECT_EQ(info.memory_usage_percent, 0.0);
  EXPECT_EQ(info.hbm_usage_percent, 3.0);
  EXPECT_EQ(info.aicore_percent, 0.0);
  EXPECT_EQ(info.aicore_freq_mhz, 1650.0);
  EXPECT_EQ(info.aicore_current_freq_mhz, 100.0);
  EXPECT_EQ(info.aicore_count, 32.0);
  EXPECT_EQ(info.temperature_celsius, 65.0);
  EXPECT_EQ(info.power_watts, 298.6);
}

TEST(NpuSmiCommon, ErrorsNameTheLine) {
  std::string text = test::read_file(kNpuInfo + "/info_t_common.txt");
  text.replace(text.find("298.6"), 5, "lots");
  EXPECT_EQ(test::error_message([&] { parse_npu_smi_common(text); }),
            "npu-smi info -t common: line 9: 'NPU Real-time Power(W)' is 'lots', expected a number");
  EXPECT_EQ(test::error_message([] { parse_npu_smi_common("NPU ID : 1\nno colon here\n"); }),
            "npu-smi info -t common: line 2: expected 'key : value', got 'no colon here'");
  EXPECT_EQ(test::error_message([] { parse_npu_smi_common("Temperature(C) : 40\n"); }),
            "npu-smi info -t common: no 'NPU ID' line (expected 'NPU ID : 0')");
  EXPECT_EQ(test::error_message([] { parse_npu_smi_common("NPU ID : -1\n"); }),
            "npu-smi info -t common: line 1: 'NPU ID' is '-1', expected a whole number");
}

}  // namespace
}  // namespace plumb::sysinfo
