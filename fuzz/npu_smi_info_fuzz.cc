// libFuzzer target: any bytes as the output of `npu-smi info`. Parsing must return or throw
// plumb::Error; every chip read has its logical id equal to its position, and ids are not negative.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/error.h"
#include "sysinfo/npu_smi.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::sysinfo::NpuSmiInfo info = plumb::sysinfo::parse_npu_smi_info(text);
    for (size_t i = 0; i < info.chips.size(); ++i) {
      const plumb::sysinfo::NpuChip& chip = info.chips[i];
      if (chip.logical_id != static_cast<int>(i) || chip.npu_id < 0 || chip.chip_id < 0) std::abort();
    }
    for (const plumb::sysinfo::NpuProcess& process : info.processes) {
      if (process.pid < 0) std::abort();
    }
  } catch (const plumb::Error&) {
  }
  return 0;
}
