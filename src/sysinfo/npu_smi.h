// Reading `npu-smi info` (Ascend): the chips in its device table with every figure the table
// shows, and the processes in its process table; and the key/value form of
// `npu-smi info -t common -i N`. The table's widths change between driver versions, so rows are
// split on '|' and cells trimmed, never read at fixed columns, and the figures are found by the
// names in the two header rows (`Power(W)`, `HBM-Usage(MB)`, ...); A3 boards show two chip rows
// per NPU (docs/run.md, "Recovery steps"; docs/device-sources.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::sysinfo {

// One "used / total" figure of the table, in the table's unit.
struct NpuUsage {
  double used = 0;
  double total = 0;
};

struct NpuChip {
  int npu_id = 0;      // "NPU" column: what `npu-smi ... -i` and --devices name
  int chip_id = 0;     // "Chip" column: what `npu-smi ... -c` names
  int logical_id = 0;  // position in the table (0, 1, ...): what `hccn_tool -i` names
  std::string name;    // "910B2", "Ascend910"
  std::string health;  // "OK", "Warning", "Alarm", "Critical", ...
  std::string bus_id;  // "0000:C1:00.0"
  // The figures; absent when the table has no such column or shows '-' / "NA" (A3's chip 1 has
  // no power of its own).
  std::optional<double> power_watts;          // Power(W)
  std::optional<double> temperature_celsius;  // Temp(C)
  std::optional<double> aicore_percent;       // AICore(%), 0..100
  std::optional<NpuUsage> hugepages_pages;    // Hugepages-Usage(page)
  std::optional<NpuUsage> memory_mib;         // Memory-Usage(MB): the chip's DDR
  std::optional<NpuUsage> hbm_mib;            // HBM-Usage(MB); npu-smi's MB is 1024 * 1024 bytes
};

struct NpuProcess {
  int npu_id = 0;
  int chip_id = 0;
  long pid = 0;
  std::string name;
};

struct NpuSmiInfo {
  std::vector<NpuChip> chips;
  std::vector<NpuProcess> processes;
};

// Parses the output of `npu-smi info`. Throws plumb::Error naming the line when a row of either
// table cannot be read, or when there is no device table at all.
NpuSmiInfo parse_npu_smi_info(std::string_view text);

// `npu-smi info -t common -i N`: "Key   : value" lines. Keys plumb does not use are skipped.
struct NpuCommonInfo {
  int npu_id = 0;                                 // NPU ID (required)
  std::optional<double> memory_usage_percent;     // Memory Usage Rate(%)
  std::optional<double> hbm_usage_percent;        // HBM Usage Rate(%)
  std::optional<double> aicore_percent;           // Aicore Usage Rate(%)
  std::optional<double> aicore_freq_mhz;          // Aicore Freq(MHZ): rated
  std::optional<double> aicore_current_freq_mhz;  // Aicore curFreq(MHZ)
  std::optional<double> aicore_count;             // Aicore Count
  std::optional<double> temperature_celsius;      // Temperature(C)
  std::optional<double> power_watts;              // NPU Real-time Power(W)
};

// Throws plumb::Error naming the line for a line that is not "key : value", a known key whose
// value is not a number, and a text without "NPU ID".
NpuCommonInfo parse_npu_smi_common(std::string_view text);

}  // namespace plumb::sysinfo
