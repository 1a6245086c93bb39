// The accelerator checks' parsers against real-format fixtures (tests/fixtures/check, SOURCES.md
// in each folder): nvidia-smi's --query-gpu CSV, npu-smi's health and ECC key/value forms, and
// Xid lines of the kernel log.
#include <gtest/gtest.h>

#include "accelerator_test_support.h"
#include "check/gpu_query.h"
#include "check/kernel_log.h"
#include "check/npu_health.h"

namespace plumb::check {
namespace {

using plumb::test::error_message;
using plumb::test::read_file;
using test::StandIns;

// ---- nvidia-smi --query-gpu

TEST(AccelGpuQuery, FindsColumnsByNameWithTheirUnitsDropped) {
  const GpuTable table =
      parse_gpu_query(read_file(StandIns::fixture("nvidia-smi/clocks_gpu4_hw_thermal.csv")));
  ASSERT_EQ(table.rows.size(), 8u);
  EXPECT_EQ(table.columns[2], "clocks.current.sm");
  EXPECT_EQ(table.cell(4, "clocks.current.sm"), "1005");
  EXPECT_EQ(table.cell(4, "clocks_event_reasons.active"), "0x0000000000000048");
  EXPECT_EQ(table.cell(4, "no.such.field"), "");
  EXPECT_TRUE(table.lost.empty());
}

TEST(AccelGpuQuery, KeepsTheFaultAndAbsentMarkersAsCells) {
  const GpuTable health =
      parse_gpu_query(read_file(StandIns::fixture("nvidia-smi/health_gpu2_requires_reset.csv")));
  EXPECT_EQ(cell_state(health.cell(2, "temperature.gpu")), CellState::kFault);
  EXPECT_EQ(cell_state(health.cell(1, "temperature.gpu")), CellState::kValue);
  const GpuTable ecc =
      parse_gpu_query(read_file(StandIns::fixture("nvidia-smi/ecc_8xH100_ok.csv")));
  EXPECT_EQ(cell_state(ecc.cell(0, "retired_pages.pending")), CellState::kAbsent);
  EXPECT_EQ(cell_yes(ecc.cell(0, "remapped_rows.pending")), false);
}

TEST(AccelGpuQuery, NamesTheGpusItCannotReach) {
  const GpuTable table =
      parse_gpu_query(read_file(StandIns::fixture("nvidia-smi/health_gpu_lost.txt")));
  EXPECT_EQ(table.rows.size(), 7u);
  ASSERT_EQ(table.lost.size(), 1u);
  EXPECT_EQ(table.lost[0], "0000:3a:00.0");
  // The newer drivers' form, and one without an address.
  EXPECT_EQ(parse_gpu_query(
                "Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error\n")
                .lost,
            std::vector<std::string>{"0000:34:00.0"});
  EXPECT_EQ(
      parse_gpu_query("Unable to determine the device handle for GPU 0: Unknown Error\n").lost,
      std::vector<std::string>{"GPU 0"});
}

TEST(AccelGpuQuery, RefusesTextThatIsNotItsCsv) {
  EXPECT_EQ(error_message([] {
              parse_gpu_query(read_file(StandIns::fixture("nvidia-smi/invalid_field.txt")));
            }),
            "nvidia-smi: line 1: expected a header of field names ('index, pci.bus_id, ...': "
            "--format=csv "
            "without noheader), got 'Field \"clocks_event_reasons.active\" is not a valid field to "
            "query.'");
  EXPECT_EQ(error_message([] { parse_gpu_query("index, pci.bus_id\n0, 00000000:18:00.0, 7\n"); }),
            "nvidia-smi: line 2: 3 values, expected 2 (one per field of the header), got '0, "
            "00000000:18:00.0, 7'");
  EXPECT_EQ(error_message([] { parse_gpu_query("\n\n"); }),
            "nvidia-smi: printed nothing (expected a CSV header and one row per GPU)");
}

TEST(AccelGpuQuery, ReadsCellsStrictly) {
  EXPECT_EQ(cell_number("1410"), 1410.0);
  EXPECT_EQ(cell_number("1410 MHz"), 1410.0);
  EXPECT_FALSE(cell_number("fast").has_value());
  EXPECT_FALSE(cell_number("14 10 MHz").has_value());
  EXPECT_EQ(cell_yes("Yes"), true);
  EXPECT_FALSE(cell_yes("Maybe").has_value());
  EXPECT_EQ(cell_mask("0x0000000000000048"), 0x48u);
  EXPECT_FALSE(cell_mask("48").has_value());
  EXPECT_FALSE(cell_mask("0xZZ").has_value());
}

TEST(AccelGpuQuery, WritesBusIdsAsSysfsDoes) {
  EXPECT_EQ(normal_bus_id("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normal_bus_id("0000:C1:00.0"), "0000:c1:00.0");
  EXPECT_EQ(normal_bus_id("0000:3b:00"), "0000:3b:00.0");  // an Xid's address has no function
  EXPECT_EQ(normal_bus_id("00010000:01:00.0"), "10000:01:00.0");
  EXPECT_EQ(normal_bus_id("GPU 0"), "gpu 0");
  EXPECT_FALSE(pci_address("3b:00:00:00.0").has_value());
}

// ---- npu-smi info -t health / -t ecc

TEST(AccelNpuHealth, ReadsThePerNpuFormWithItsMcu) {
  const NpuHealth health =
      parse_npu_health(read_file(StandIns::fixture("npu-smi/health_npu_ok.txt")));
  EXPECT_EQ(health.npu_id, 0);
  ASSERT_EQ(health.chips.size(), 2u);
  EXPECT_EQ(health.chips[0].chip_id, 0);
  EXPECT_EQ(health.chips[0].health, "OK");
  EXPECT_EQ(health.chips[1].name, "MCU");
  EXPECT_EQ(health.chips[1].health, "OK");
}

TEST(AccelNpuHealth, ReadsThePerChipFormWithItsErrorCode) {
  const NpuHealth health =
      parse_npu_health(read_file(StandIns::fixture("npu-smi/health_chip_alarm.txt")));
  ASSERT_EQ(health.chips.size(), 1u);
  EXPECT_EQ(health.chips[0].health, "Alarm");
  EXPECT_EQ(health.chips[0].error_code, "80E18402");
  EXPECT_TRUE(no_error_code(health.chips[0].error_info));
  EXPECT_TRUE(
      no_error_code(parse_npu_health(read_file(StandIns::fixture("npu-smi/health_chip_ok.txt")))
                        .chips[0]
                        .error_code));
}

TEST(AccelNpuHealth, MapsHealthWordsToStatuses) {
  EXPECT_EQ(npu_health_status("OK"), Status::kOk);
  EXPECT_EQ(npu_health_status("Warning"), Status::kWarning);
  EXPECT_EQ(npu_health_status("Alarm"), Status::kCritical);
  EXPECT_EQ(npu_health_status("Critical"), Status::kCritical);
  EXPECT_EQ(npu_health_status("UNKNOWN"), Status::kCritical);
  EXPECT_EQ(npu_health_status("Odd"), Status::kWarning);
}

TEST(AccelNpuHealth, RefusesOtherText) {
  EXPECT_EQ(error_message([] { parse_npu_health("Health : OK\nthis is not a pair\n"); }),
            "npu-smi: line 2: expected 'key : value', got 'this is not a pair'");
  EXPECT_EQ(error_message([] { parse_npu_health("NPU ID : 0\n"); }),
            "npu-smi: no 'Health' line (expected npu-smi info -t health output)");
  EXPECT_EQ(error_message([] { parse_npu_health("NPU ID : zero\nHealth : OK\n"); }),
            "npu-smi: 'NPU ID' is 'zero', expected a whole number");
}

TEST(AccelNpuEcc, SumsTheDoubleBitCounts) {
  EXPECT_EQ(npu_double_bit_errors(read_file(StandIns::fixture("npu-smi/ecc_chip_ok.txt"))), 0.0);
  EXPECT_EQ(npu_double_bit_errors(read_file(StandIns::fixture("npu-smi/ecc_chip_double_bit.txt"))),
            3.0);
  EXPECT_FALSE(npu_double_bit_errors("Single-bit Error Count : 1\n").has_value());
  EXPECT_EQ(error_message([] { npu_double_bit_errors("Double-bit Error Count : many\n"); }),
            "npu-smi: 'Double-bit Error Count' is 'many', expected a count");
}

// ---- Xid lines

TEST(AccelKernelLog, ReadsXidLinesOfTheCurrentDrivers) {
  const std::vector<XidEvent> events =
      parse_xid_events(read_file(StandIns::fixture("dmesg/xid_13_109_gpud_readme.log")));
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].bus_id, "0000:cb:00.0");
  EXPECT_EQ(events[0].code, 13);
  EXPECT_EQ(events[3].code, 109);
  EXPECT_EQ(events[3].message,
            "pid=1797828, name=pt_main_thread, Ch 00000008, errorString CTX SWITCH TIMEOUT, Info "
            "0x58005");
}

TEST(AccelKernelLog, ReadsTheFallenOffTheBusMessageWithoutAnXid) {
  const std::vector<XidEvent> events =
      parse_xid_events(read_file(StandIns::fixture("dmesg/xid_63_79_fallen_off.log")));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].code, 63);
  EXPECT_EQ(events[0].bus_id, "0000:10:1c.0");
  EXPECT_EQ(events[1].code, 79);
  EXPECT_EQ(events[1].bus_id, "0000:b3:00.0");
  EXPECT_EQ(events[1].message, "GPU has fallen off the bus (no Xid line)");
  EXPECT_EQ(events[2].code, 79);
  EXPECT_EQ(events[2].bus_id, "0000:44:00.0");
}

TEST(AccelKernelLog, SkipsLinesThatAreNotXids) {
  EXPECT_TRUE(parse_xid_events(read_file(StandIns::fixture("dmesg/no_xid_mlx5.log"))).empty());
  EXPECT_TRUE(
      parse_xid_events("NVRM: Xid (PCI:0000:3b:00): many, pid=1\nNVRM: Xid (PCI:0000:3b:00\n")
          .empty());
  // Older drivers leave out "PCI:".
  const std::vector<XidEvent> old = parse_xid_events("NVRM: Xid (0000:03:00): 13, 0001 00000000\n");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].bus_id, "0000:03:00.0");
}

TEST(AccelKernelLog, TheTableFollowsNvidiasCatalogAndAzure) {
  for (const int code :
       {48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 119, 120, 95}) {
    ASSERT_NE(find_xid(code), nullptr) << code;
    EXPECT_EQ(find_xid(code)->severity, Status::kCritical) << code;
  }
  EXPECT_EQ(find_xid(13)->severity, Status::kWarning);
  EXPECT_EQ(find_xid(31)->severity, Status::kWarning);
  EXPECT_EQ(find_xid(94)->severity, Status::kWarning);
  EXPECT_EQ(find_xid(43)->severity, Status::kOk);
  EXPECT_EQ(find_xid(12345), nullptr);
  for (size_t i = 1; i < xid_table().size(); ++i)
    EXPECT_LT(xid_table()[i - 1].code, xid_table()[i].code);
}

}  // namespace
}  // namespace plumb::check
