#include "sysinfo/nvidia_smi.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"

namespace plumb::sysinfo {
namespace {

// nvidia-smi's CSV is not quoted (no value it prints holds a comma), so a split on ',' is exact.
std::vector<std::string_view> values_of(std::string_view line) {
  std::vector<std::string_view> values;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    values.push_back(trim_blanks(line.substr(start, comma == std::string_view::npos ? comma : comma - start)));
    if (comma == std::string_view::npos) return values;
    start = comma + 1;
  }
}

// What nvidia-smi prints for a value it does not have: the value is absent.
constexpr std::array<std::string_view, 5> kAbsent = {"[N/A]", "[Not Supported]", "N/A", "",
                                                     "[Insufficient Permissions]"};
// What it prints for a value it cannot read because the device is in trouble: absent, and the
// device is not healthy.
constexpr std::array<std::string_view, 3> kUnhealthy = {"[GPU requires reset]", "[Unknown Error]",
                                                        "[GPU is lost]"};

template <size_t N>
bool one_of(std::string_view value, const std::array<std::string_view, N>& set) {
  for (const std::string_view item : set) {
    if (value == item) return true;
  }
  return false;
}

struct Column {
  std::string name;  // "memory.used"
  std::string unit;  // "MiB", "%", "W" or "" (temperature.gpu has none)
};

using NumberField = std::optional<double> NvidiaGpu::*;
using TextField = std::string NvidiaGpu::*;

struct NumberColumn {
  std::string_view name;
  NumberField field;
};

constexpr NumberColumn kNumberColumns[] = {
    {"memory.used", &NvidiaGpu::memory_used_mib},
    {"memory.total", &NvidiaGpu::memory_total_mib},
    {"memory.free", &NvidiaGpu::memory_free_mib},
    {"temperature.gpu", &NvidiaGpu::temperature_celsius},
    {"power.draw", &NvidiaGpu::power_watts},
    {"utilization.gpu", &NvidiaGpu::utilization_percent},
    {"utilization.memory", &NvidiaGpu::memory_utilization_percent},
};

struct TextColumn {
  std::string_view name;
  TextField field;
};

constexpr TextColumn kTextColumns[] = {
    {"uuid", &NvidiaGpu::uuid}, {"name", &NvidiaGpu::name}, {"pci.bus_id", &NvidiaGpu::pci_bus_id}};

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_';
}

std::string quoted_line(std::string_view line) {
  std::string quoted = terminal_safe(line);
  if (quoted.size() > kQuoteLimit) quoted = quoted.substr(0, kQuoteLimit) + "...";
  return quoted;
}

// "memory.used [MiB]" -> {memory.used, MiB}; nothing for a cell that is not a column name.
std::optional<Column> column_of(std::string_view cell) {
  Column column;
  const size_t bracket = cell.find('[');
  column.name = std::string(trim_blanks(cell.substr(0, bracket)));
  if (column.name.empty() || !(column.name[0] >= 'a' && column.name[0] <= 'z')) return std::nullopt;
  for (const char c : column.name) {
    if (!is_name_char(c)) return std::nullopt;
  }
  if (bracket != std::string_view::npos) {
    const size_t close = cell.find(']', bracket);
    if (close == std::string_view::npos || close + 1 != cell.size()) return std::nullopt;
    column.unit = std::string(trim_blanks(cell.substr(bracket + 1, close - bracket - 1)));
  }
  return column;
}

std::vector<Column> header_of(std::string_view line, int number) {
  std::vector<Column> columns;
  for (const std::string_view cell : values_of(line)) {
    const std::optional<Column> column = column_of(cell);
    if (!column) {
      throw Error(fmt::format(
          "nvidia-smi: line {}: expected a header of column names ('index, name, memory.used "
          "[MiB], ...': run with --format=csv, not noheader), got '{}'",
          number, quoted_line(line)));
    }
    columns.push_back(*column);
  }
  return columns;
}

// "682 MiB" (csv) or "682" (csv,nounits) under "memory.used [MiB]".
std::optional<double> number_of(std::string_view value, const std::string& unit) {
  if (!unit.empty() && value.size() > unit.size() &&
      value.substr(value.size() - unit.size()) == unit) {
    value = trim_blanks(value.substr(0, value.size() - unit.size()));
  }
  double number = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(number)) {
    return std::nullopt;
  }
  return number;
}

class NvidiaSmiParser {
 public:
  void line(std::string_view text, int number) {
    text = trim_blanks(text);
    if (text.empty()) return;
    if (!saw_header_) {
      columns_ = header_of(text, number);
      saw_header_ = true;
      return;
    }
    row(text, number);
  }

  std::vector<NvidiaGpu> finish() {
    if (!saw_header_) throw Error("nvidia-smi: printed nothing (expected a CSV header and rows)");
    return std::move(gpus_);
  }

 private:
  void row(std::string_view text, int number) {
    const std::vector<std::string_view> values = values_of(text);
    if (values.size() != columns_.size()) {
      throw Error(fmt::format("nvidia-smi: line {}: {} values, expected {} (one per column of the "
                              "header), got '{}'",
                              number, values.size(), columns_.size(), quoted_line(text)));
    }
    NvidiaGpu gpu;
    gpu.position = static_cast<int>(gpus_.size());
    for (size_t i = 0; i < values.size(); ++i) cell(gpu, columns_[i], values[i], number);
    gpus_.push_back(std::move(gpu));
  }

  void cell(NvidiaGpu& gpu, const Column& column, std::string_view value, int number) const {
    if (one_of(value, kAbsent)) return;
    if (one_of(value, kUnhealthy)) {
      gpu.healthy = false;
      return;
    }
    if (column.name == "index") return index(gpu, column, value, number);
    for (const TextColumn& text : kTextColumns) {
      if (column.name == text.name) gpu.*text.field = std::string(value);
    }
    for (const NumberColumn& known : kNumberColumns) {
      if (column.name != known.name) continue;
      gpu.*known.field = number_of(value, column.unit);
      if (!(gpu.*known.field)) fail(number, column, value, column.unit.empty() ? "a number" :
                                    "a number with " + column.unit);
    }
  }

  void index(NvidiaGpu& gpu, const Column& column, std::string_view value, int number) const {
    int parsed = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (ec != std::errc() || end != value.data() + value.size() || parsed < 0) {
      fail(number, column, value, "a whole number");
    }
    gpu.index = parsed;
  }

  [[noreturn]] static void fail(int number, const Column& column, std::string_view value,
                                const std::string& expected) {
    throw Error(fmt::format("nvidia-smi: line {}: '{}' is '{}', expected {}", number, column.name,
                            terminal_safe(shorten(value)), expected));
  }

  std::vector<Column> columns_;
  std::vector<NvidiaGpu> gpus_;
  bool saw_header_ = false;
};

}  // namespace

std::vector<NvidiaGpu> parse_nvidia_smi_csv(std::string_view text) {
  NvidiaSmiParser parser;
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

std::string device_label(const NvidiaGpu& gpu) {
  return std::to_string(gpu.index ? *gpu.index : gpu.position);
}

}  // namespace plumb::sysinfo
