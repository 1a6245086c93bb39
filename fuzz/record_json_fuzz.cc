// libFuzzer target: any bytes as a record file given to plumb diff / report / --compare
// (plumb.baseline/1 or plumb.comm/1). Reading must return or throw plumb::Error; a record read is
// then compared with itself, which must also return or throw plumb::Error (never a library
// exception), and every row it kept must hold possible numbers.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "baseline/diff.h"
#include "baseline/record_json.h"
#include "common/error.h"
#include "common/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string problem;  // read as plumb reads a record: nesting bounded first (common/json.h)
  const nlohmann::json doc = plumb::parse_json_or_discarded(text, problem);
  if (doc.is_discarded()) return 0;
  try {
    const plumb::baseline::Record r = plumb::baseline::record_from_json(doc, "fuzz.json");
    for (const auto& row : r.rows) {
      if (!(row.time_us > 0) || !std::isfinite(row.busbw_gbps) || row.busbw_gbps < 0) std::abort();
    }
    (void)plumb::baseline::diff(r, r);
  } catch (const plumb::Error&) {
  }
  return 0;
}
