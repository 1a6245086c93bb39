// libFuzzer target: any bytes as an msprobe dump.json (plumb precision compare on dumps). Reading
// must return or throw plumb::Error; what it returns must hold possible values: sizes that are not
// negative, tensor names unique and under their call's name, a data_name that is a plain file name.
// Each tensor's summary then goes through the statistics-mode difference against itself.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "common/error.h"
#include "precision/msprobe_dump.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::precision::MsprobeDump dump = plumb::precision::parse_dump_json(text, "fuzz/dump.json", "fuzz");
    std::set<std::string> keys;
    for (const auto& call : dump.calls) {
      for (const auto& t : call.tensors) {
        if (!keys.insert(t.key).second || t.key.compare(0, call.api.size(), call.api) != 0) std::abort();
        for (int64_t d : t.shape) {
          if (d < 0) std::abort();
        }
        if (t.data_name.find('/') != std::string::npos) std::abort();
        const plumb::precision::TensorStats s = plumb::precision::dump_stats(t);
        const plumb::precision::StatDiffs d = plumb::precision::stat_diffs(s, s);
        if (std::isfinite(s.max) && d.max_diff != 0) std::abort();
      }
    }
  } catch (const plumb::Error&) {
  }
  return 0;
}
