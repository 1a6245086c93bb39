// libFuzzer target: any bytes as a hccl_test log. The importer must return tests or throw
// plumb::Error -- never crash, hang or throw anything else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "baseline/importers/importer.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  plumb::baseline::ImportOptions options;
  options.collective = "allreduce";
  options.ranks = 8;
  try {
    (void)plumb::baseline::hccl_test_importer().parse(text, "fuzz.log", options);
  } catch (const plumb::Error&) {
  }
  return 0;
}
