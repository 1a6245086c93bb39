// libFuzzer target: any bytes as a `plumb plan validate` run-set file (docs/plan.md section 10).
// The reader must either return a predicted set or throw plumb::Error -- never crash, hang or
// throw anything else (a YAML::Exception from a conversion, std::out_of_range, ...). Models and
// hardware come from the catalog by name; a *_file is read relative to /nonexistent, so a mutated
// path names no real file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "plan/validation_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    plumb::plan::run_set_from_text(text, "/nonexistent/fuzz.yaml");
  } catch (const plumb::Error&) {
    // a clear message for the user: fine
  }
  return 0;
}
