// libFuzzer target: any bytes as a baseline set file given to plumb diff (plumb.baseline/1 as
// plumb export writes a set: seven parts and "missing"). The record is read, its memory and serving parts read
// back as plumb diff reads it, and the set compared with itself and reported on the console and as
// JSON: each must return or throw plumb::Error (never a library exception, never a crash).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "baseline/record_json.h"
#include "baseline/record_kind.h"
#include "baseline/set_diff.h"
#include "common/error.h"
#include "common/json.h"
#include "report/memory_baseline_reporter.h"
#include "report/serve_reporter.h"
#include "report/set_diff_reporter.h"

namespace {

plumb::mem::MemoryBaseline read_memory(const nlohmann::json& part, const std::string& origin) {
  return plumb::report::memory_baseline_from_json(part, origin);
}

plumb::serve::ServeResult read_serve(const nlohmann::json& part, const std::string& origin) {
  return plumb::report::serve_from_json(part, origin);
}

void compare_with_itself(const plumb::baseline::Record& r) {
  const plumb::baseline::SetDiff d = plumb::baseline::set_diff(r, r, {}, {read_memory, read_serve});
  std::ostringstream out;
  plumb::report::print_set_diff(d, true, out);
  out << plumb::baseline::set_diff_json(d).dump(-1, ' ', false,
                                                nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string problem;  // read as plumb reads a record: nesting bounded first (common/json.h)
  const nlohmann::json doc = plumb::parse_json_or_discarded(text, problem);
  if (doc.is_discarded()) return 0;
  try {  // the memory part reader on the document's memory part, or on the document itself
    (void)read_memory(doc.is_object() && doc.contains("memory") ? doc["memory"] : doc, "fuzz.json");
  } catch (const plumb::Error&) {
  }
  try {
    const plumb::baseline::Record r = plumb::baseline::record_from_json(doc, "fuzz.json");
    if (plumb::baseline::holds_set(r)) compare_with_itself(r);
  } catch (const plumb::Error&) {
  }
  return 0;
}
