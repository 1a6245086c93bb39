// `nvidia-smi --query-gpu=FIELDS --format=csv,nounits` as a table of text cells, for the
// accelerator checks (docs/check.md). Unlike sysinfo/nvidia_smi.h, which reads a fixed set of
// figures, the checks ask for fields of every kind (counts, Yes/No, bit masks), so a cell is kept
// as its text and read by the check that asked for it. Columns are found by name in the header
// ("clocks.max.sm [MHz]" is clocks.max.sm), never by position.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::check {

struct GpuTable {
  std::vector<std::string> columns;            // "index", "pci.bus_id", ...
  std::vector<std::vector<std::string>> rows;  // one per GPU, one cell per column
  // GPUs nvidia-smi names in "Unable to determine the device handle for GPU..." lines: their bus
  // id ("0000:3b:00.0") when the line gives one, else the line's name of the GPU ("GPU1").
  std::vector<std::string> lost;

  // The cell of `row` in the column `name`; "" when there is no such column.
  std::string_view cell(size_t row, std::string_view name) const;
  bool has_column(std::string_view name) const;
};

// Throws plumb::Error naming the line: a first line that is not a header of field names, a row
// with another number of cells than the header has, and a text with no header at all.
GpuTable parse_gpu_query(std::string_view text);

// How nvidia-smi fills a cell it cannot give a value for.
enum class CellState {
  kValue,   // a value
  kAbsent,  // "[N/A]", "[Not Supported]", "N/A", "": the GPU or driver has no such figure
  kFault,   // "[GPU requires reset]", "[Unknown Error]", "[GPU is lost]", "ERR!": the GPU is in
            // trouble
};
CellState cell_state(std::string_view cell);

// A decimal number, with or without a unit after it ("1410", "1410 MHz", "36.5"); nothing else.
std::optional<double> cell_number(std::string_view cell);
// "Yes" / "No" (and "1" / "0"); nothing else.
std::optional<bool> cell_yes(std::string_view cell);
// A bit mask "0x0000000000000044"; nothing else.
std::optional<uint64_t> cell_mask(std::string_view cell);

// Text from a tool's output as a verdict quotes it: terminal-safe and at most 120 characters.
std::string shown_text(std::string_view text);

// "0000:3b:00.0" for "00000000:3B:00.0", "0000:3B:00.0" or "3b:00.0": a PCI address as sysfs
// names it (4-digit domain, lower case). An Xid's "0000:3b:00" (no function) gets ".0". Text that
// is not a PCI address comes back lower-cased as it is.
std::string normal_bus_id(std::string_view text);
// The same, or nothing for text that is not a PCI address.
std::optional<std::string> pci_address(std::string_view text);

}  // namespace plumb::check
