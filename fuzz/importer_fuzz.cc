// libFuzzer target for one importer (PLUMB_FUZZ_IMPORTER names it; fuzz/CMakeLists.txt builds one
// target per importer): any bytes as a log. The importer must return tests or throw plumb::Error
// -- never crash, hang or throw anything else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "baseline/importers/importer.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const plumb::baseline::Importer& importer =
      plumb::baseline::find_importer(PLUMB_FUZZ_IMPORTER);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  plumb::baseline::ImportOptions options;
  options.collective = "allreduce";  // the logs that do not name it
  options.ranks = 8;                 // the logs that do not count them
  try {
    (void)importer.parse(text, "fuzz.log", options);
  } catch (const plumb::Error&) {
  }
  return 0;
}
