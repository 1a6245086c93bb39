#include "sysinfo/npu_smi.h"

#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <cmath>
#include <optional>

#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"

namespace plumb::sysinfo {
namespace {

enum class Table { kNone, kDeviceHeader, kDevices, kProcessHeader, kProcesses };

// "| a  | b |" -> {"a", "b"}
std::vector<std::string> cells_of(std::string_view line) {
  std::vector<std::string> cells;
  line = trim_blanks(line);
  if (!line.empty() && line.front() == '|') line.remove_prefix(1);
  if (!line.empty() && line.back() == '|') line.remove_suffix(1);
  size_t start = 0;
  while (start <= line.size()) {
    size_t end = line.find('|', start);
    if (end == std::string_view::npos) end = line.size();
    cells.emplace_back(trim_blanks(line.substr(start, end - start)));
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

// A figure of the table: '-', "NA" and "N/A" mean the chip has none (A3's chip 1 shows '-' for
// power: chip 0's row carries the board's).
bool is_absent(std::string_view word) { return word == "-" || word == "NA" || word == "N/A"; }

std::optional<double> decimal_of(std::string_view word) {
  double value = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size() || !std::isfinite(value) ||
      value < 0) {
    return std::nullopt;
  }
  return value;
}

// The figures of cells [2, end) as words, with "29954/ 65536" and "3133 / 65536" each one word
// ("29954/65536"): the spacing around '/' differs between driver versions.
std::vector<std::string> figures_of(const std::vector<std::string>& cells) {
  std::string joined;
  for (size_t i = 2; i < cells.size(); ++i) {
    for (const char c : cells[i]) {
      if (c == '/') {
        while (!joined.empty() && joined.back() == ' ') joined.pop_back();
      } else if ((c == ' ' || c == '\t') && !joined.empty() && joined.back() == '/') {
        continue;
      }
      joined += c == '\t' ? ' ' : c;
    }
    joined += ' ';
  }
  return words_of(joined);
}

// The column names of a header row's cells [2, end): "Power(W)", "Temp(C)", ...
std::vector<std::string> columns_of(const std::vector<std::string>& cells) {
  std::vector<std::string> names;
  for (size_t i = 2; i < cells.size(); ++i) {
    for (std::string& word : words_of(cells[i])) names.push_back(std::move(word));
  }
  return names;
}

std::string shown_columns(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : " ") + name;
  return text;
}

class NpuSmiParser {
 public:
  void line(std::string_view text, int number) {
    number_ = number;
    text_ = text;
    text = trim_blanks(text);
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
    std::string quoted = terminal_safe(trim_blanks(text_));
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
      npu_columns_ = columns_of(cells);
    } else if (table_ == Table::kDeviceHeader && !cells.empty() && starts_with(cells[0], "Chip")) {
      chip_columns_ = columns_of(cells);
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
    read_figures(cells, npu_columns_);
    expect_npu_row_ = false;
  }

  void chip_row(const std::vector<std::string>& cells) {
    const std::vector<std::string> words = words_of(cells[0]);
    const std::optional<long> chip = words.empty() ? std::nullopt : number_of(words[0]);
    if (!chip || cells.size() < 2) fail("a Chip row: 'Chip [Phy-ID] | Bus-Id | ...'");
    pending_.chip_id = static_cast<int>(*chip);
    pending_.bus_id = cells[1];
    read_figures(cells, chip_columns_);
    pending_.logical_id = static_cast<int>(info_.chips.size());
    info_.chips.push_back(pending_);
    expect_npu_row_ = true;
  }

  // The figures of an NPU or Chip row, by the names of the header row above them.
  void read_figures(const std::vector<std::string>& cells, const std::vector<std::string>& names) {
    const std::vector<std::string> figures = figures_of(cells);
    if (figures.size() != names.size()) {
      fail(fmt::format("{} figure(s) under '{}'", names.size(), shown_columns(names)));
    }
    for (size_t i = 0; i < names.size(); ++i) read_figure(names[i], figures[i]);
  }

  void read_figure(const std::string& name, const std::string& word) {
    if (starts_with(name, "Power")) pending_.power_watts = single(name, word);
    if (starts_with(name, "Temp")) pending_.temperature_celsius = single(name, word);
    if (starts_with(name, "AICore")) pending_.aicore_percent = single(name, word);
    if (starts_with(name, "Hugepages")) pending_.hugepages_pages = usage(name, word);
    if (starts_with(name, "Memory-Usage")) pending_.memory_mib = usage(name, word);
    if (starts_with(name, "HBM-Usage")) pending_.hbm_mib = usage(name, word);
  }

  std::optional<double> single(const std::string& name, const std::string& word) const {
    if (is_absent(word)) return std::nullopt;
    const std::optional<double> value = decimal_of(word);
    if (!value) fail_figure(name, word, "a number");
    return value;
  }

  std::optional<NpuUsage> usage(const std::string& name, const std::string& word) const {
    if (is_absent(word)) return std::nullopt;
    const size_t slash = word.find('/');
    const std::optional<double> used =
        slash == std::string::npos ? std::nullopt : decimal_of(word.substr(0, slash));
    const std::optional<double> total =
        slash == std::string::npos ? std::nullopt : decimal_of(word.substr(slash + 1));
    if (!used || !total) fail_figure(name, word, "'used / total'");
    return NpuUsage{*used, *total};
  }

  [[noreturn]] void fail_figure(const std::string& name, std::string_view word,
                                std::string_view expected) const {
    throw Error(fmt::format("npu-smi info: line {}: '{}' is '{}', expected {}", number_,
                            terminal_safe(name), terminal_safe(shorten(word)), expected));
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
  std::vector<std::string> npu_columns_;   // "Power(W)", "Temp(C)", "Hugepages-Usage(page)"
  std::vector<std::string> chip_columns_;  // "AICore(%)", "Memory-Usage(MB)", "HBM-Usage(MB)"
  int number_ = 0;
  std::string_view text_;
};

}  // namespace

NpuSmiInfo parse_npu_smi_info(std::string_view text) {
  NpuSmiParser parser;
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

namespace {

using CommonField = std::optional<double> NpuCommonInfo::*;

struct CommonKey {
  std::string_view key;
  CommonField field;
};

constexpr CommonKey kCommonKeys[] = {
    {"Memory Usage Rate(%)", &NpuCommonInfo::memory_usage_percent},
    {"HBM Usage Rate(%)", &NpuCommonInfo::hbm_usage_percent},
    {"Aicore Usage Rate(%)", &NpuCommonInfo::aicore_percent},
    {"Aicore Freq(MHZ)", &NpuCommonInfo::aicore_freq_mhz},
    {"Aicore curFreq(MHZ)", &NpuCommonInfo::aicore_current_freq_mhz},
    {"Aicore Count", &NpuCommonInfo::aicore_count},
    {"Temperature(C)", &NpuCommonInfo::temperature_celsius},
    {"NPU Real-time Power(W)", &NpuCommonInfo::power_watts},
};

[[noreturn]] void fail_common(int number, std::string_view what) {
  throw Error(fmt::format("npu-smi info -t common: line {}: {}", number, what));
}

std::optional<double> common_number(int number, std::string_view key, std::string_view value) {
  if (is_absent(value)) return std::nullopt;
  const std::optional<double> parsed = decimal_of(value);
  if (!parsed) {
    fail_common(number, fmt::format("'{}' is '{}', expected a number", key,
                                    terminal_safe(shorten(value))));
  }
  return parsed;
}

void common_line(NpuCommonInfo& info, bool& saw_id, std::string_view line, int number) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    std::string quoted = terminal_safe(line);
    if (quoted.size() > kQuoteLimit) quoted = quoted.substr(0, kQuoteLimit) + "...";
    fail_common(number, fmt::format("expected 'key : value', got '{}'", quoted));
  }
  const std::string_view key = trim_blanks(line.substr(0, colon));
  const std::string_view value = trim_blanks(line.substr(colon + 1));
  if (key == "NPU ID") {
    const std::optional<long> id = number_of(value);
    if (!id) fail_common(number, fmt::format("'NPU ID' is '{}', expected a whole number",
                                             terminal_safe(shorten(value))));
    info.npu_id = static_cast<int>(*id);
    saw_id = true;
    return;
  }
  for (const CommonKey& known : kCommonKeys) {
    if (key == known.key) info.*known.field = common_number(number, key, value);
  }
}

}  // namespace

NpuCommonInfo parse_npu_smi_common(std::string_view text) {
  NpuCommonInfo info;
  bool saw_id = false;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim_blanks(text.substr(start, end - start));
    ++number;
    if (!line.empty()) common_line(info, saw_id, line, number);
    start = end + 1;
  }
  if (!saw_id) throw Error("npu-smi info -t common: no 'NPU ID' line (expected 'NPU ID : 0')");
  return info;
}

}  // namespace plumb::sysinfo
