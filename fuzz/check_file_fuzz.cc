// libFuzzer target: any bytes as what plumb check reads that a user or a tool writes — a check
// file (plumb.check-file/1, YAML), `chronyc -n tracking` and `timedatectl show` output, and a
// plumb.check/1 document read back. The first byte picks the reader. Each must return or throw
// plumb::Error, never crash; a check file that loads must give every check a readable section.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "check/check_file.h"
#include "check/clock_sync.h"
#include "common/error.h"
#include "common/json.h"
#include "report/check_reporter.h"

namespace {

void check_file(std::string_view text) {
  const plumb::check::CheckFile file = plumb::check::parse_check_file(text, "fuzz.yaml");
  for (const plumb::check::CheckSpec& spec : plumb::check::node_checks()) {
    (void)file.enabled(spec);
    const plumb::check::CheckSection section = file.section(spec);
    for (const std::string& key : spec.keys) {
      try {
        (void)section.text(key);
      } catch (const plumb::Error&) {
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0: check_file(text); break;
      case 1: (void)plumb::check::parse_chronyc_tracking(text); break;
      case 2: (void)plumb::check::parse_timedatectl_show(text); break;
      default: (void)plumb::report::check_from_json(plumb::parse_json(text, "fuzz.json"), "fuzz.json");
    }
  } catch (const plumb::Error&) {
  }
  return 0;
}
