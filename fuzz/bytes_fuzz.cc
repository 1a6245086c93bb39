// libFuzzer target: any bytes as a -b/-e size. parse_bytes must return or throw plumb::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "common/units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const uint64_t bytes = plumb::parse_bytes(text, "--max-bytes");
    (void)plumb::format_bytes(bytes);
  } catch (const plumb::Error&) {
  }
  return 0;
}
