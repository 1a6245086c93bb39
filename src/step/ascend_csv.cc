#include "step/ascend_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "common/error.h"
#include "common/input_file.h"
#include "step/chrome_trace.h"

namespace plumb::step {
namespace {

std::string_view trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(kSpace);
  return text.substr(begin, end - begin + 1);
}

// Splits RFC 4180 text into records: commas between cells, double quotes around a cell that
// holds commas, quotes or newlines, "" for a quote inside one. Blank lines are skipped.
class RecordSplitter {
 public:
  RecordSplitter(std::string_view text, size_t pos, int line) : text_(text), pos_(pos), line_(line) {}

  // The next record into `row` (its cells' storage reused); false at the end of the text.
  bool next(CsvTable::Row& row) {
    while (pos_ < text_.size()) {
      row.line = line_;
      size_t used = record(row.cells);
      row.cells.resize(used);
      row.ended = ended_;
      if (!(used == 1 && trimmed(row.cells[0]).empty())) return true;
    }
    return false;
  }
  size_t pos() const { return pos_; }
  int line() const { return line_; }
  bool in_quotes() const { return in_quotes_; }

 private:
  size_t record(std::vector<std::string>& cells) {
    size_t used = 0;
    auto start_cell = [&] {
      if (used == cells.size()) cells.emplace_back();
      cells[used++].clear();
    };
    start_cell();
    bool quoted = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (quoted) {
        if (c == '"' && pos_ < text_.size() && text_[pos_] == '"') {
          cells[used - 1].push_back('"');
          ++pos_;
        } else if (c == '"') {
          quoted = false;
        } else {
          if (c == '\n') ++line_;
          cells[used - 1].push_back(c);
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        start_cell();
      } else if (c == '\n') {
        ++line_;
        ended_ = true;
        return used;
      } else if (c != '\r') {
        cells[used - 1].push_back(c);
      }
    }
    ended_ = false;  // the text ended first
    in_quotes_ = quoted;
    return used;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  bool ended_ = true;
  bool in_quotes_ = false;
};

}  // namespace

CsvTable CsvTable::read(const std::filesystem::path& path) {
  return parse(read_whole_file(path.string(), "a CSV file"), path.string());
}

CsvTable CsvTable::parse(std::string text, std::string source) {
  CsvTable table;
  table.source_ = std::move(source);
  table.text_ = std::move(text);
  size_t start = std::string_view(table.text_).starts_with("\xEF\xBB\xBF") ? 3 : 0;  // BOM
  RecordSplitter splitter(table.text_, start, 1);
  Row header;
  if (!splitter.next(header)) {
    throw Error(fmt::format("{}: empty; expected a CSV header line", table.source_));
  }
  for (const std::string& name : header.cells) table.header_.emplace_back(trimmed(name));
  table.body_ = splitter.pos();
  table.body_line_ = splitter.line();
  return table;
}

void CsvTable::for_each_row(const std::function<void(const Row&)>& fn) const {
  RecordSplitter splitter(text_, body_, body_line_);
  Row row;
  while (splitter.next(row)) {
    if (splitter.in_quotes()) {
      throw Error(fmt::format("{}:{}: the file ends inside a quoted cell of this row: it was cut "
                              "short",
                              source_, row.line));
    }
    if (row.cells.size() != header_.size() && !row.ended) {
      throw Error(fmt::format("{}:{}: the file ends inside this row ({} of {} cells): it was cut "
                              "short",
                              source_, row.line, row.cells.size(), header_.size()));
    }
    if (row.cells.size() != header_.size()) {
      throw Error(fmt::format("{}:{}: expected {} cells as in the header, got {}", source_,
                              row.line, header_.size(), row.cells.size()));
    }
    fn(row);
  }
}

std::vector<CsvTable::Row> CsvTable::rows() const {
  std::vector<Row> all;
  for_each_row([&](const Row& row) { all.push_back(row); });
  return all;
}

std::optional<size_t> CsvTable::find_column(std::string_view name) const {
  auto it = std::find(header_.begin(), header_.end(), name);
  if (it == header_.end()) return std::nullopt;
  return static_cast<size_t>(it - header_.begin());
}

size_t CsvTable::column(std::string_view name) const {
  if (std::optional<size_t> index = find_column(name)) return *index;
  constexpr size_t kShown = 4;
  std::vector<std::string> shown;
  for (size_t i = 0; i < header_.size() && i < kShown; ++i) shown.push_back("'" + header_[i] + "'");
  throw Error(fmt::format("{}:1: no column '{}' in the header; expected it beside {}{}", source_,
                          name, fmt::join(shown, ", "), header_.size() > kShown ? ", ..." : ""));
}

std::string_view CsvTable::cell(const Row& row, size_t index) const {
  if (index >= row.cells.size()) {
    throw Error(fmt::format("{}:{}: expected {} cells as in the header, got {}", source_,
                            row.line, header_.size(), row.cells.size()));
  }
  return row.cells[index];
}

std::optional<int64_t> ascend_us_to_ns(std::string_view text) {
  text = trimmed(text);
  size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  // The CSV's plain decimal µs only (no sign, no exponent); the exact conversion is the trace
  // scanner's.
  constexpr size_t kMaxWholeDigits = 16;
  if (whole.empty() || whole.size() > kMaxWholeDigits || !digits(whole) || !digits(fraction)) {
    return std::nullopt;
  }
  return microseconds_text_to_ns(text);
}

namespace {

[[noreturn]] void fail_cell(const CsvTable& table, const CsvTable::Row& row,
                            std::string_view column_name, std::string_view cell) {
  throw Error(fmt::format("{}:{}: column '{}': expected a time in microseconds, got '{}'",
                          table.source(), row.line, column_name, trimmed(cell)));
}

}  // namespace

int64_t cell_us_to_ns(const CsvTable& table, const CsvTable::Row& row, size_t column,
                      std::string_view column_name) {
  std::string_view cell = table.cell(row, column);
  if (std::optional<int64_t> ns = ascend_us_to_ns(cell)) return *ns;
  fail_cell(table, row, column_name, cell);
}

int64_t cell_signed_us_to_ns(const CsvTable& table, const CsvTable::Row& row, size_t column,
                             std::string_view column_name) {
  std::string_view cell = trimmed(table.cell(row, column));
  const bool negative = cell.starts_with('-');
  if (std::optional<int64_t> ns = ascend_us_to_ns(negative ? cell.substr(1) : cell)) {
    return negative ? -*ns : *ns;
  }
  fail_cell(table, row, column_name, cell);
}

}  // namespace plumb::step
