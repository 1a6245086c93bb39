#include "check/gpu_query.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

// Printed instead of the CSV rows for a GPU the driver lost (NVML's "Unknown Error" on the handle).
constexpr std::string_view kLostPrefix = "Unable to determine the device handle for ";
constexpr size_t kPciDomainDigits = 4;  // sysfs names domains with at least 4 hex digits

constexpr std::array<std::string_view, 5> kAbsent = {"[N/A]", "[Not Supported]", "N/A", "",
                                                     "[Insufficient Permissions]"};
constexpr std::array<std::string_view, 4> kFault = {"[GPU requires reset]", "[Unknown Error]",
                                                    "[GPU is lost]", "ERR!"};

template <size_t N>
bool one_of(std::string_view value, const std::array<std::string_view, N>& set) {
  for (const std::string_view item : set) {
    if (value == item) return true;
  }
  return false;
}

std::vector<std::string> cells_of(std::string_view line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    const size_t end = comma == std::string_view::npos ? line.size() : comma;
    cells.emplace_back(trim_blanks(line.substr(start, end - start)));
    if (comma == std::string_view::npos) return cells;
    start = comma + 1;
  }
}

std::string quoted(std::string_view line) { return shown_text(line); }

bool is_field_char(char c) {
  return std::islower(static_cast<unsigned char>(c)) ||
         std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '_';
}

// "clocks.max.sm [MHz]" -> "clocks.max.sm"; nothing for a cell that is not a field name.
std::optional<std::string> field_of(std::string_view cell) {
  const size_t bracket = cell.find('[');
  const std::string_view name = trim_blanks(cell.substr(0, bracket));
  if (name.empty() || !std::islower(static_cast<unsigned char>(name.front()))) return std::nullopt;
  for (const char c : name) {
    if (!is_field_char(c)) return std::nullopt;
  }
  if (bracket != std::string_view::npos && cell.back() != ']') return std::nullopt;
  return std::string(name);
}

std::vector<std::string> header_of(std::string_view line, int number) {
  std::vector<std::string> columns;
  for (const std::string& cell : cells_of(line)) {
    std::optional<std::string> field = field_of(cell);
    if (!field) {
      throw Error(
          fmt::format("nvidia-smi: line {}: expected a header of field names ('index, "
                      "pci.bus_id, ...': --format=csv without noheader), got '{}'",
                      number, quoted(line)));
    }
    columns.push_back(std::move(*field));
  }
  return columns;
}

bool hex_digits(std::string_view text, size_t least, size_t most);

// "GPU0000:CB:00.0: Unknown Error" (older drivers), "GPU1: 0000:34:00.0: Unknown Error" (newer):
// the bus id, else the GPU's name in the line ("GPU1").
std::string lost_gpu(std::string_view rest) {
  std::vector<std::string_view> pieces;
  for (size_t start = 0; start <= rest.size();) {
    size_t end = rest.find(": ", start);
    if (end == std::string_view::npos) end = rest.size();
    pieces.push_back(trim_blanks(rest.substr(start, end - start)));
    start = end + 2;
  }
  for (std::string_view piece : pieces) {
    if (piece.substr(0, 3) == "GPU") piece.remove_prefix(3);
    if (std::optional<std::string> bus = pci_address(piece)) return *bus;
  }
  return terminal_safe(shorten(pieces.front()));
}

bool hex_digits(std::string_view text, size_t least, size_t most) {
  if (text.size() < least || text.size() > most) return false;
  for (const char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view GpuTable::cell(size_t row, std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name && row < rows.size() && i < rows[row].size()) return rows[row][i];
  }
  return {};
}

bool GpuTable::has_column(std::string_view name) const {
  for (const std::string& column : columns) {
    if (column == name) return true;
  }
  return false;
}

GpuTable parse_gpu_query(std::string_view text) {
  GpuTable table;
  bool saw_header = false;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim_blanks(text.substr(start, end - start));
    start = end + 1;
    ++number;
    if (line.empty()) continue;
    if (line.substr(0, kLostPrefix.size()) == kLostPrefix) {
      table.lost.push_back(lost_gpu(line.substr(kLostPrefix.size())));
    } else if (!saw_header) {
      table.columns = header_of(line, number);
      saw_header = true;
    } else {
      std::vector<std::string> cells = cells_of(line);
      if (cells.size() != table.columns.size()) {
        throw Error(
            fmt::format("nvidia-smi: line {}: {} values, expected {} (one per field of the "
                        "header), got '{}'",
                        number, cells.size(), table.columns.size(), quoted(line)));
      }
      table.rows.push_back(std::move(cells));
    }
  }
  if (!saw_header && table.lost.empty()) {
    throw Error("nvidia-smi: printed nothing (expected a CSV header and one row per GPU)");
  }
  return table;
}

CellState cell_state(std::string_view cell) {
  if (one_of(cell, kAbsent)) return CellState::kAbsent;
  if (one_of(cell, kFault)) return CellState::kFault;
  return CellState::kValue;
}

std::optional<double> cell_number(std::string_view cell) {
  const size_t space = cell.find(' ');
  const std::string_view digits = cell.substr(0, space);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  if (space != std::string_view::npos) {
    const std::string_view unit = trim_blanks(cell.substr(space));
    if (unit.empty() || unit.find(' ') != std::string_view::npos) return std::nullopt;
  }
  return value;
}

std::optional<bool> cell_yes(std::string_view cell) {
  if (cell == "Yes" || cell == "1") return true;
  if (cell == "No" || cell == "0") return false;
  return std::nullopt;
}

std::optional<uint64_t> cell_mask(std::string_view cell) {
  if (cell.size() < 3 || cell[0] != '0' || (cell[1] != 'x' && cell[1] != 'X')) return std::nullopt;
  uint64_t value = 0;
  const std::string_view digits = cell.substr(2);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::string shown_text(std::string_view text) {
  std::string shown = terminal_safe(text.substr(0, kQuoteLimit));
  if (text.size() > kQuoteLimit) shown += "...";
  return shown;
}

std::optional<std::string> pci_address(std::string_view text) {
  text = trim_blanks(text);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t colon = text.find(':', start);
    parts.emplace_back(text.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  std::string domain = parts.size() == 3 ? parts[0] : std::string("0000");
  const std::string& bus = parts[parts.size() - 2];
  std::string device = parts.back();
  std::string function = "0";
  if (const size_t dot = device.find('.'); dot != std::string::npos) {
    function = device.substr(dot + 1);
    device.resize(dot);
  }
  if (!hex_digits(domain, 1, 8) || !hex_digits(bus, 2, 2) || !hex_digits(device, 2, 2) ||
      !hex_digits(function, 1, 1)) {
    return std::nullopt;
  }
  const size_t first = std::min(domain.find_first_not_of('0'), domain.size() - 1);
  domain = domain.substr(
      std::min(first, domain.size() > kPciDomainDigits ? domain.size() - kPciDomainDigits : 0));
  if (domain.size() < kPciDomainDigits)
    domain = std::string(kPciDomainDigits - domain.size(), '0') + domain;
  return lower(domain + ":" + bus + ":" + device + "." + function);
}

std::string normal_bus_id(std::string_view text) {
  std::optional<std::string> address = pci_address(text);
  return address ? *address : lower(trim_blanks(text));
}

}  // namespace plumb::check
