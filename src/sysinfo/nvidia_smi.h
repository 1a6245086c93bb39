// Reading `nvidia-smi --query-gpu=... --format=csv` (with or without `nounits`): columns are
// found by the names in the header line ("memory.used [MiB]"), in whatever order and subset the
// query asked for; units in the header say what a value may carry ("682 MiB", "20 %",
// "250.12 W"). docs/device-sources.md lists the columns read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::sysinfo {

struct NvidiaGpu {
  int position = 0;          // the row's place among the devices (0, 1, ...)
  std::optional<int> index;  // the `index` column, when queried: nvidia-smi's device index
  std::string uuid;          // "GPU-..." or ""
  std::string name;          // "NVIDIA A100-SXM4-80GB" or ""
  std::string pci_bus_id;    // "00000000:09:00.0" or ""
  // Absent when not queried or when nvidia-smi shows "[N/A]", "[Not Supported]", "N/A", ...
  std::optional<double> memory_used_mib;
  std::optional<double> memory_total_mib;
  std::optional<double> memory_free_mib;
  std::optional<double> temperature_celsius;    // temperature.gpu
  std::optional<double> power_watts;            // power.draw
  std::optional<double> utilization_percent;    // utilization.gpu, 0..100
  std::optional<double> memory_utilization_percent;  // utilization.memory
  // False when a value reads "[GPU requires reset]", "[Unknown Error]" or "[GPU is lost]".
  bool healthy = true;
};

// The GPUs of the output, in row order. Throws plumb::Error naming the line (and the column)
// for a first line that is not a header of column names, a row with another number of values
// than the header has columns, and a value that is not a number with the header's unit.
std::vector<NvidiaGpu> parse_nvidia_smi_csv(std::string_view text);

// The device label of a GPU: its index when queried, else its position (docs/device-sources.md).
std::string device_label(const NvidiaGpu& gpu);

}  // namespace plumb::sysinfo
