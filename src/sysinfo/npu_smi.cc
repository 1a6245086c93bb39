#include "sysinfo/npu_smi.h"

#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <optional>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::sysinfo {
namespace {

constexpr size_t kQuoteLimit = 120;  // characters of a bad row quoted in an error

enum class Table { kNone, kDeviceHeader, kDevices, kProcessHeader, kProcesses };

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// "| a  | b |" -> {"a", "b"}
std::vector<std::string> cells_of(std::string_view line) {
  std::vector<std::string> cells;
  line = trim(line);
  if (!line.empty() && line.front() == '|') line.remove_prefix(1);
  if (!line.empty() && line.back() == '|') line.remove_suffix(1);
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find('|', start);
    if (end == std::string_view::npos) end = line.size();
    cells.emplace_back(trim(line.substr(start, end - start)));
    start = end + 1;
  }
  return cells;
}

std::vector<std::string> words_of(std::string_view cell) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < cell.size()) {
    while (i < cell.size() && (cell[i] == ' ' || cell[i] == '\t')) ++i;
    const size_t start = i;
    while (i < cell.size() && cell[i] != ' ' && cell[i] != '\t') ++i;
    if (i > start) words.emplace_back(cell.substr(start, i - start));
  }
  return words;
}

// A non-negative decimal number up to `max`; nothing for anything else.
std::optional<long> number_of(std::string_view word, long max = INT_MAX) {
  long value = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size() || value < 0 || value > max) {
    return std::nullopt;
  }
  return value;
}

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

class Parser {
 public:
  void line(std::string_view text, int number) {
    number_ = number;
    text_ = text;
    text = trim(text);
    if (text.empty()) return;
    if (text.front() == '+') return separator();
    if (text.front() == '|') return row(cells_of(text));
  }

  NpuSmiInfo finish() {
    if (!saw_devices_) {
      throw Error(
          "npu-smi info: no device table (expected a header row 'NPU  Name | Health | ...')");
    }
    if (!expect_npu_row_) fail("the Chip row under the NPU row");
    return std::move(info_);
  }

 private:
  [[noreturn]] void fail(std::string_view expected) const {
    std::string quoted = terminal_safe(trim(text_));
    if (quoted.size() > kQuoteLimit) quoted = quoted.substr(0, kQuoteLimit) + "...";
    throw Error(fmt::format("npu-smi info: line {}: expected {}, got '{}'", number_, expected,
                            quoted));
  }

  void separator() {
    if (table_ == Table::kDeviceHeader) table_ = Table::kDevices;
    if (table_ == Table::kProcessHeader) table_ = Table::kProcesses;
    if (table_ == Table::kDevices && !expect_npu_row_) fail("the Chip row under the NPU row");
  }

  void row(const std::vector<std::string>& cells) {
    if (cells.size() >= 2 && starts_with(cells[0], "NPU") && starts_with(cells[1], "Health")) {
      table_ = Table::kDeviceHeader;
      saw_devices_ = true;
    } else if (cells.size() >= 2 && starts_with(cells[0], "NPU") &&
               starts_with(cells[1], "Process id")) {
      table_ = Table::kProcessHeader;
    } else if (table_ == Table::kDevices) {
      expect_npu_row_ ? npu_row(cells) : chip_row(cells);
    } else if (table_ == Table::kProcesses) {
      process_row(cells);
    }
  }

  void npu_row(const std::vector<std::string>& cells) {
    const std::vector<std::string> words = words_of(cells[0]);
    const std::optional<long> id = words.empty() ? std::nullopt : number_of(words[0]);
    if (!id || cells.size() < 2) fail("an NPU row: 'NPU-ID  Name | Health | ...'");
    pending_ = NpuChip{};
    pending_.npu_id = static_cast<int>(*id);
    pending_.name = words.size() > 1 ? words[1] : "";
    pending_.health = cells[1];
    expect_npu_row_ = false;
  }

  void chip_row(const std::vector<std::string>& cells) {
    const std::vector<std::string> words = words_of(cells[0]);
    const std::optional<long> chip = words.empty() ? std::nullopt : number_of(words[0]);
    if (!chip || cells.size() < 2) fail("a Chip row: 'Chip [Phy-ID] | Bus-Id | ...'");
    pending_.chip_id = static_cast<int>(*chip);
    pending_.bus_id = cells[1];
    pending_.logical_id = static_cast<int>(info_.chips.size());
    info_.chips.push_back(pending_);
    expect_npu_row_ = true;
  }

  void process_row(const std::vector<std::string>& cells) {
    if (cells.size() < 3) return;  // "No running processes found in NPU 0"
    const std::vector<std::string> ids = words_of(cells[0]);
    const std::optional<long> npu = !ids.empty() ? number_of(ids[0]) : std::nullopt;
    const std::optional<long> chip = ids.size() > 1 ? number_of(ids[1]) : std::nullopt;
    const std::optional<long> pid = number_of(cells[1], LONG_MAX);
    if (!npu || !chip || !pid) fail("a process row: 'NPU  Chip | Process id | Process name | ...'");
    info_.processes.push_back(
        NpuProcess{static_cast<int>(*npu), static_cast<int>(*chip), *pid, cells[2]});
  }

  NpuSmiInfo info_;
  Table table_ = Table::kNone;
  bool saw_devices_ = false;
  bool expect_npu_row_ = true;
  NpuChip pending_;
  int number_ = 0;
  std::string_view text_;
};

}  // namespace

NpuSmiInfo parse_npu_smi_info(std::string_view text) {
  Parser parser;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    parser.line(text.substr(start, end - start), ++number);
    start = end + 1;
  }
  return parser.finish();
}

}  // namespace plumb::sysinfo
