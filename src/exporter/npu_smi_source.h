// The Ascend fallback device source: runs `npu-smi info` and exports HBM, temperature, power,
// AICore utilization and health per chip (docs/device-sources.md). A value no device can report
// is left out, counted in plumb_exporter_source_malformed_total and logged.
#pragma once

#include <string>
#include <vector>

#include "exporter/device_reading.h"
#include "exporter/nvidia_smi_source.h"
#include "exporter/source.h"
#include "sysinfo/npu_smi.h"

namespace plumb::exporter {

// The readings of npu-smi's chips. The device label is the NPU id, or "NPU-CHIP" for every chip
// when some NPU shows more than one chip (Atlas A3); HBM in npu-smi's MB (MiB) to bytes; health
// "OK" is healthy, anything else ("Warning", "Alarm", "Critical") is not.
std::vector<DeviceReading> npu_readings(const sysinfo::NpuSmiInfo& info);

class NpuSmiSource : public Source {
 public:
  explicit NpuSmiSource(DeviceToolOptions options);
  std::string name() const override { return "npu-smi"; }
  double interval_seconds() const override { return options_.interval_seconds; }
  Families collect() override;

 private:
  DeviceToolOptions options_;
  MalformedLog malformed_;
};

}  // namespace plumb::exporter
