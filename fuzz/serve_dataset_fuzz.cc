// libFuzzer target: any bytes as what plumb serve bench reads from a user — a --dataset file (a
// JSONL of prompts, a ShareGPT JSON, a Mooncake trace; its format guessed as the command does)
// — and a plumb.serve/1 document read back (the store, plumb diff). The first byte picks the
// reader. Each must return or throw plumb::Error, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "common/json.h"
#include "report/serve_reporter.h"
#include "serve/datasets.h"

namespace {

void dataset(std::string_view text, int pick) {
  using plumb::serve::DatasetFormat;
  const DatasetFormat format =
      pick == 3 ? plumb::serve::guess_dataset_format(text) : static_cast<DatasetFormat>(pick);
  for (const auto& entry : plumb::serve::read_dataset(text, "fuzz.jsonl", format)) {
    if (entry.input_tokens < 1 || entry.output_tokens < 0) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const int pick = data[0] % 5;
    if (pick < 4) {
      dataset(text, pick);
    } else {
      (void)plumb::report::serve_from_json(plumb::parse_json(text, "fuzz.json"), "fuzz.json");
    }
  } catch (const plumb::Error&) {
  }
  return 0;
}
