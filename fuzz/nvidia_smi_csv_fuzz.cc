// libFuzzer target: any bytes as the output of `nvidia-smi --query-gpu=... --format=csv`.
// Parsing must return or throw plumb::Error; positions count up from 0 and indexes are not
// negative.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/error.h"
#include "sysinfo/nvidia_smi.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<plumb::sysinfo::NvidiaGpu> gpus = plumb::sysinfo::parse_nvidia_smi_csv(text);
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i].position != static_cast<int>(i)) std::abort();
      if (gpus[i].index && *gpus[i].index < 0) std::abort();
    }
  } catch (const plumb::Error&) {
  }
  return 0;
}
