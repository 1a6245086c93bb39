// Reading `npu-smi info` (Ascend): the chips in its device table and the processes in its process
// table. The table's widths change between driver versions, so rows are split on '|' and cells
// trimmed, never read at fixed columns; A3 boards show two chip rows per NPU (docs/run.md,
// "Recovery steps").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace plumb::sysinfo {

struct NpuChip {
  int npu_id = 0;      // "NPU" column: what `npu-smi ... -i` and --devices name
  int chip_id = 0;     // "Chip" column: what `npu-smi ... -c` names
  int logical_id = 0;  // position in the table (0, 1, ...): what `hccn_tool -i` names
  std::string name;    // "910B2", "Ascend910"
  std::string health;  // "OK", "Warning", ...
  std::string bus_id;  // "0000:C1:00.0"
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

}  // namespace plumb::sysinfo
