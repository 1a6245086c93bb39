// What the device fallback sources (nvidia-smi, npu-smi) read about one device, in base units,
// and the one place that turns readings into the plumb_device_* families (series.h) and runs a
// device tool with its time limit. docs/device-sources.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exporter/metrics.h"

namespace plumb::exporter {

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

// Runs a device tool (argv[0] looked up in PATH when it has no '/') within `timeout_seconds` and
// returns its standard output. Throws plumb::Error "<tool>: no answer within 5 s", "<tool>: exit 9"
// or "<tool>: could not be started" (exit 127 from the shell convention).
std::string run_device_tool(const std::vector<std::string>& argv, double timeout_seconds,
                            const std::string& tool);

}  // namespace plumb::exporter
