#include "exporter/nvidia_smi_source.h"

#include "common/error.h"

namespace plumb::exporter {
namespace {

std::optional<double> times(const std::optional<double>& value, double factor) {
  return value ? std::optional<double>(*value * factor) : std::nullopt;
}

}  // namespace

std::vector<DeviceReading> nvidia_readings(const std::vector<sysinfo::NvidiaGpu>& gpus) {
  std::vector<DeviceReading> readings;
  for (const sysinfo::NvidiaGpu& gpu : gpus) {
    DeviceReading r;
    r.device = sysinfo::device_label(gpu);
    r.vendor = "nvidia";
    r.model = gpu.name;
    r.hbm_used_bytes = times(gpu.memory_used_mib, kBytesPerMiB);  // nvidia-smi's MiB: 2^20 bytes
    r.hbm_total_bytes = times(gpu.memory_total_mib, kBytesPerMiB);
    r.temperature_celsius = gpu.temperature_celsius;
    r.power_watts = gpu.power_watts;
    r.utilization_ratio = times(gpu.utilization_percent, 1 / kPercent);
    r.healthy = gpu.healthy;
    readings.push_back(std::move(r));
  }
  return readings;
}

NvidiaSmiSource::NvidiaSmiSource(DeviceToolOptions options)
    : options_(std::move(options)), malformed_("refused value(s)", options_.log, options_.now) {}

Families NvidiaSmiSource::collect() {
  const std::string output = run_device_tool(
      {options_.command, kNvidiaSmiQuery, "--format=csv"}, options_.timeout_seconds, name());
  const std::vector<sysinfo::NvidiaGpu> gpus = sysinfo::parse_nvidia_smi_csv(output);
  if (gpus.empty()) throw Error("nvidia-smi: printed no device table (a header and no GPU rows)");
  return checked_device_families(options_.host, name(), nvidia_readings(gpus), malformed_);
}

}  // namespace plumb::exporter
