#include "exporter/npu_smi_source.h"

#include <set>

#include "common/error.h"

namespace plumb::exporter {
namespace {

bool several_chips_per_npu(const sysinfo::NpuSmiInfo& info) {
  std::set<int> npus;
  for (const sysinfo::NpuChip& chip : info.chips) {
    if (!npus.insert(chip.npu_id).second) return true;
  }
  return false;
}

}  // namespace

std::vector<DeviceReading> npu_readings(const sysinfo::NpuSmiInfo& info) {
  const bool per_chip = several_chips_per_npu(info);
  std::vector<DeviceReading> readings;
  for (const sysinfo::NpuChip& chip : info.chips) {
    DeviceReading r;
    r.device = per_chip ? std::to_string(chip.npu_id) + "-" + std::to_string(chip.chip_id)
                        : std::to_string(chip.npu_id);
    r.vendor = "ascend";
    r.model = chip.name;
    // "0 / 0" is a chip without HBM (the DDR-only parts), not an empty one: absent.
    if (chip.hbm_mib && chip.hbm_mib->total > 0) {
      r.hbm_used_bytes = chip.hbm_mib->used * kBytesPerMiB;
      r.hbm_total_bytes = chip.hbm_mib->total * kBytesPerMiB;
    }
    r.temperature_celsius = chip.temperature_celsius;
    r.power_watts = chip.power_watts;
    if (chip.aicore_percent) r.utilization_ratio = *chip.aicore_percent / kPercent;
    r.healthy = chip.health == "OK";
    readings.push_back(std::move(r));
  }
  return readings;
}

NpuSmiSource::NpuSmiSource(DeviceToolOptions options)
    : options_(std::move(options)), malformed_("refused value(s)", options_.log, options_.now) {}

Families NpuSmiSource::collect() {
  const std::string output =
      run_device_tool({options_.command, "info"}, options_.timeout_seconds, name());
  const sysinfo::NpuSmiInfo info = sysinfo::parse_npu_smi_info(output);
  if (info.chips.empty()) throw Error("npu-smi: printed no device table (a header and no chips)");
  return checked_device_families(options_.host, name(), npu_readings(info), malformed_);
}

}  // namespace plumb::exporter
