// libFuzzer target: any bytes as a Slurm hostlist expression. Expansion must either succeed or
// throw plumb::Error; what expands must compress to an expression that expands to the same names.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "topo/hostlist.h"

// Smaller than the command's limit so that each input runs in milliseconds.
constexpr size_t kFuzzLimit = 100'000;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> names;
  try {
    names = plumb::topo::expand_hostlist(text, kFuzzLimit);
  } catch (const plumb::Error&) {
    return 0;
  }
  if (plumb::topo::expand_hostlist(plumb::topo::compress_hostlist(names), kFuzzLimit) != names) {
    __builtin_trap();
  }
  return 0;
}
