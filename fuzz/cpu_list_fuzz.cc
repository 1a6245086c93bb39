// libFuzzer target: any bytes as a CPU list ("0-3,8,10-11", what ranks send rank 0 and what
// users type). The parser must return or throw plumb::Error, never crash; what it returns must
// format and parse back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/error.h"
#include "topo/cpu_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::topo::CpuSet cpus = plumb::topo::parse_cpu_list(text, "fuzz");
    const std::string list = plumb::topo::format_cpu_list(cpus);
    if (plumb::topo::parse_cpu_list(list, "fuzz") != cpus) std::abort();
  } catch (const plumb::Error&) {
  }
  return 0;
}
