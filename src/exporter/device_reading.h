// What the device fallback sources (nvidia-smi, npu-smi) read about one device, in base units,
// and the one place that turns readings into the plumb_device_* families (series.h) and runs a
// device tool with its time limit. docs/device-sources.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exporter/malformed_log.h"
#include "exporter/metrics.h"

namespace plumb::exporter {

inline constexpr double kPercent = 100.0;  // a tool's percentages over the exporter's ratios

struct DeviceReading {
  std::string device;  // the `device` label: GPU index, NPU id, "NPU-CHIP" on boards of two chips
  std::string vendor;  // "nvidia", "ascend"
  std::string model;   // "NVIDIA A100-SXM4-80GB", "910B2"
  // Absent when the tool does not report it: the series is then left out, never written as 0.
  std::optional<double> hbm_used_bytes;
  std::optional<double> hbm_total_bytes;
  std::optional<double> temperature_celsius;
  std::optional<double> power_watts;
  std::optional<double> utilization_ratio;  // 0..1
  std::optional<bool> healthy;
};

inline constexpr double kBytesPerMiB = 1024.0 * 1024.0;

// One family per plumb_device_* series that at least one device has a value for, each sample
// labelled host, device, vendor, model (in that order).
Families device_families(const std::string& host, const std::vector<DeviceReading>& devices);

// Removes from `readings` each value no device can report (value_bounds.h: a temperature below
// absolute zero or above 200 °C, a power below 0 or above 10 kW, a utilization outside 0..1,
// device memory below 0 or above 16 TiB, or more used than in all) and returns one message for
// each: "nvidia-smi: device 3: temperature 1e+300 °C, expected -273.15 to 200". The device's other
// values stay: one broken sensor does not hide the rest.
std::vector<std::string> refuse_impossible(std::vector<DeviceReading>& readings,
                                           const std::string& tool);

// What a device source exports: device_families of what refuse_impossible leaves, each value
// refused added to `refused` (logged from there), and plumb_exporter_source_malformed_total
// {source=tool} after them.
Families checked_device_families(const std::string& host, const std::string& tool,
                                 std::vector<DeviceReading> readings, MalformedLog& refused);

// Runs a device tool (argv[0] looked up in PATH when it has no '/') within `timeout_seconds` and
// returns its standard output. Throws plumb::Error "<tool>: no answer within 5 s", "<tool>: exit 9"
// or "<tool>: could not be started" (exit 127 from the shell convention).
std::string run_device_tool(const std::vector<std::string>& argv, double timeout_seconds,
                            const std::string& tool);

}  // namespace plumb::exporter
