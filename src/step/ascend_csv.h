// The CSV files torch_npu's profiler writes (kernel_details.csv, step_trace_time.csv, ...), read
// by their header's column names: the column sets differ between CANN versions, and cells may be
// quoted ("""32,3,224,224""") or carry stray whitespace (a tab inside "Start Time(us)").
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::step {

class CsvTable {
 public:
  // One data row: its cells (unquoted) and the line it starts on (the header is line 1).
  struct Row {
    int line = 0;
    std::vector<std::string> cells;
    bool ended = true;  // false when the text ends before the row's line end
  };

  // Reads `path` whole and its header line. A missing or unreadable file, or one without a
  // header line, throws plumb::Error naming it.
  static CsvTable read(const std::filesystem::path& path);
  // The same for text in memory; `source` names it in messages.
  static CsvTable parse(std::string text, std::string source);

  // The index of the column named `name` (exact, after trimming spaces), or an Error
  // "<file>:1: no column 'Duration(us)' in the header; expected it beside 'Step Id', ...".
  size_t column(std::string_view name) const;
  std::optional<size_t> find_column(std::string_view name) const;

  // Calls fn for each data row in order, splitting as it goes: one row's cells at a time beside
  // the text (kernel_details.csv runs to hundreds of MB). The Row is reused between calls.
  // A row with another number of cells than the header throws plumb::Error: a file cut inside
  // its last row "<file>:<line>: the file ends inside this row (12 of 46 cells): it was cut
  // short", or a file that ends inside a quoted cell; any other row "<file>:<line>: expected 46
  // cells as in the header, got 12". (A last row cut inside its last cell keeps its count:
  // none of the columns plumb reads is last in any layout CANN writes.)
  void for_each_row(const std::function<void(const Row&)>& fn) const;
  // Every data row at once, for small files.
  std::vector<Row> rows() const;

  const std::string& source() const { return source_; }
  size_t size() const { return text_.size(); }

  // The cell of `row` in column `index`, or an Error "<file>:<line>: expected N cells, got M"
  // when the row is short.
  std::string_view cell(const Row& row, size_t index) const;

 private:
  std::string source_;
  std::string text_;
  size_t body_ = 0;  // where the first data row starts
  int body_line_ = 1;
  std::vector<std::string> header_;
};

// A cell of microseconds as the Ascend tools write them ("1736408883704643.212\t", "53.741",
// "1699529622790614.8") → integer nanoseconds, exactly from the decimal digits (rounded half up
// past the third fractional digit). nullopt when it is not a plain non-negative decimal.
std::optional<int64_t> ascend_us_to_ns(std::string_view text);

// ascend_us_to_ns() of a cell, or an Error
// "<file>:<line>: column 'Start Time(us)': expected a time in microseconds, got 'x'".
int64_t cell_us_to_ns(const CsvTable& table, const CsvTable::Row& row, size_t column,
                      std::string_view column_name);

// The same, taking a leading '-' too: a negative time is a value the reader judges (a damaged
// row, docs/step.md "Damaged input"), not text it cannot read.
int64_t cell_signed_us_to_ns(const CsvTable& table, const CsvTable::Row& row, size_t column,
                             std::string_view column_name);

}  // namespace plumb::step
