// The NVIDIA fallback device source: runs `nvidia-smi --query-gpu=... --format=csv` and exports
// memory, temperature, power, utilization and health per GPU (docs/device-sources.md). A value no
// device can report is left out, counted in plumb_exporter_source_malformed_total and logged.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "exporter/device_reading.h"
#include "exporter/malformed_log.h"
#include "exporter/source.h"
#include "sysinfo/nvidia_smi.h"

namespace plumb::exporter {

// The query plumb asks nvidia-smi for (every column is optional to the parser).
inline constexpr const char* kNvidiaSmiQuery =
    "--query-gpu=index,uuid,name,memory.used,memory.total,temperature.gpu,power.draw,"
    "utilization.gpu";

struct DeviceToolOptions {
  std::string host;      // the host label
  std::string command;   // the tool: a name looked up in PATH or a path
  double interval_seconds = 5;
  double timeout_seconds = 5;
  std::function<void(const std::string&)> log;  // values refused; default: standard error
  std::function<double()> now;                  // seconds; default: the steady clock
};

// The readings of nvidia-smi's rows; MiB to bytes, percent to a ratio.
std::vector<DeviceReading> nvidia_readings(const std::vector<sysinfo::NvidiaGpu>& gpus);

class NvidiaSmiSource : public Source {
 public:
  explicit NvidiaSmiSource(DeviceToolOptions options);
  std::string name() const override { return "nvidia-smi"; }
  double interval_seconds() const override { return options_.interval_seconds; }
  Families collect() override;

 private:
  DeviceToolOptions options_;
  MalformedLog malformed_;
};

}  // namespace plumb::exporter
