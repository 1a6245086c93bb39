// libFuzzer target: any bytes as one of torch_npu's CSV files (kernel_details.csv). Splitting,
// finding a column and reading every cell as microseconds must return or throw plumb::Error;
// a time read must be non-negative.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "step/ascend_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::step::CsvTable table = plumb::step::CsvTable::parse(std::move(text), "fuzz.csv");
    const size_t column = table.column("Start Time(us)");
    table.for_each_row([&](const plumb::step::CsvTable::Row& row) {
      if (plumb::step::cell_us_to_ns(table, row, column, "Start Time(us)") < 0) std::abort();
    });
  } catch (const plumb::Error&) {
  }
  return 0;
}
