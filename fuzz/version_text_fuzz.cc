// libFuzzer target: any bytes as the files plumb env reads (os-release, cpuinfo, the NVIDIA
// driver's version file, Ascend's KEY=VALUE files). The parsers must return, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sysinfo/version_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)plumb::sysinfo::os_pretty_name(text);
  (void)plumb::sysinfo::cpu_model(text);
  (void)plumb::sysinfo::cpu_count(text);
  (void)plumb::sysinfo::nvidia_driver_version(text);
  (void)plumb::sysinfo::key_value(text, "version");
  return 0;
}
