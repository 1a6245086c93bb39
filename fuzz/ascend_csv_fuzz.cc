// libFuzzer target: any bytes as one of torch_npu's CSV files (kernel_details.csv). Splitting
// (rows cut short, open quotes and wrong cell counts refused), finding a column and reading
// every cell as microseconds must return or throw plumb::Error; an unsigned time read must be
// non-negative, and a signed one negative only when its cell starts with '-'.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "step/ascend_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::step::CsvTable table = plumb::step::CsvTable::parse(std::move(text), "fuzz.csv");
    const size_t column = table.column("Start Time(us)");
    const std::optional<size_t> duration = table.find_column("Duration(us)");
    table.for_each_row([&](const plumb::step::CsvTable::Row& row) {
      if (plumb::step::cell_us_to_ns(table, row, column, "Start Time(us)") < 0) std::abort();
      if (!duration) return;
      const int64_t ns =
          plumb::step::cell_signed_us_to_ns(table, row, *duration, "Duration(us)");
      const std::string_view cell = table.cell(row, *duration);
      if (ns < 0 && cell.find('-') == std::string_view::npos) std::abort();
    });
  } catch (const plumb::Error&) {
  }
  return 0;
}
