#include "exporter/device_reading.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/subprocess.h"
#include "exporter/series.h"
#include "exporter/value_bounds.h"

namespace plumb::exporter {
namespace {

constexpr int kExitNotStarted = 127;  // what the child exits with when exec fails (subprocess.cc)

using Reader = std::optional<double> (*)(const DeviceReading&);

struct DeviceSeries {
  const char* name;
  const char* help;
  Reader read;
};

const DeviceSeries kDeviceSeries[] = {
    {series::kHbmUsed, "Device memory (HBM) in use, bytes",
     [](const DeviceReading& d) { return d.hbm_used_bytes; }},
    {series::kHbmTotal, "Device memory (HBM) in all, bytes",
     [](const DeviceReading& d) { return d.hbm_total_bytes; }},
    {series::kTemperature, "Device temperature, degrees Celsius",
     [](const DeviceReading& d) { return d.temperature_celsius; }},
    {series::kPower, "Device power draw, watts",
     [](const DeviceReading& d) { return d.power_watts; }},
    {series::kUtilization, "Device compute utilization, 0..1 (GPU busy time, AICore)",
     [](const DeviceReading& d) { return d.utilization_ratio; }},
    {series::kHealthy, "1 when the device tool reports the device healthy, 0 when not",
     [](const DeviceReading& d) {
       return d.healthy ? std::optional<double>(*d.healthy ? 1.0 : 0.0) : std::nullopt;
     }},
};

// The range of each value a device tool reports, in its base unit.
struct ValueRange {
  const char* name;
  const char* unit;  // "" for a ratio
  std::optional<double> DeviceReading::*field;
  double least;
  double most;
};

const ValueRange kRanges[] = {
    {"temperature", " °C", &DeviceReading::temperature_celsius, kMinCelsius, kMaxCelsius},
    {"power", " W", &DeviceReading::power_watts, 0, kMaxDeviceWatts},
    {"utilization", "", &DeviceReading::utilization_ratio, 0, 1},
    {"HBM used", " bytes", &DeviceReading::hbm_used_bytes, 0, kMaxDeviceMemoryBytes},
    {"HBM total", " bytes", &DeviceReading::hbm_total_bytes, 0, kMaxDeviceMemoryBytes},
};

void refuse_out_of_range(DeviceReading& d, const std::string& tool,
                         std::vector<std::string>& messages) {
  for (const ValueRange& r : kRanges) {
    std::optional<double>& value = d.*r.field;
    if (!value || (*value >= r.least && *value <= r.most)) continue;  // NaN is refused
    messages.push_back(fmt::format("{}: device {}: {} {}{}, expected {} to {}", tool, d.device,
                                   r.name, *value, r.unit, bound_text(r.least),
                                   bound_text(r.most)));
    value.reset();
  }
}

}  // namespace

std::vector<std::string> refuse_impossible(std::vector<DeviceReading>& readings,
                                           const std::string& tool) {
  std::vector<std::string> messages;
  for (DeviceReading& d : readings) {
    refuse_out_of_range(d, tool, messages);
    if (d.hbm_used_bytes && d.hbm_total_bytes && *d.hbm_used_bytes > *d.hbm_total_bytes) {
      messages.push_back(fmt::format("{}: device {}: HBM used {} bytes is more than its total {} "
                                     "bytes; both left out",
                                     tool, d.device, *d.hbm_used_bytes, *d.hbm_total_bytes));
      d.hbm_used_bytes.reset();
      d.hbm_total_bytes.reset();
    }
  }
  return messages;
}

Families device_families(const std::string& host, const std::vector<DeviceReading>& devices) {
  Families families;
  for (const DeviceSeries& s : kDeviceSeries) {
    Family family{s.name, s.help, "gauge", {}};
    for (const DeviceReading& device : devices) {
      const std::optional<double> value = s.read(device);
      if (!value) continue;
      family.samples.push_back({{{series::kHost, host},
                                 {series::kDevice, device.device},
                                 {"vendor", device.vendor},
                                 {"model", device.model}},
                                *value,
                                ""});
    }
    if (!family.samples.empty()) families.push_back(std::move(family));
  }
  return families;
}

Families checked_device_families(const std::string& host, const std::string& tool,
                                 std::vector<DeviceReading> readings, MalformedLog& refused) {
  for (std::string& message : refuse_impossible(readings, tool)) refused.add(std::move(message));
  refused.flush();
  Families families = device_families(host, readings);
  families.push_back(source_malformed_family(host, tool, refused.count()));
  return families;
}

std::string run_device_tool(const std::vector<std::string>& argv, double timeout_seconds,
                            const std::string& tool) {
  const std::optional<ProcessResult> result = run_with_timeout(argv, timeout_seconds);
  if (!result) throw Error(fmt::format("{}: no answer within {:g} s", tool, timeout_seconds));
  if (result->exit_code == kExitNotStarted) {
    throw Error(fmt::format("{}: could not be started ('{}': exit 127)", tool, argv.front()));
  }
  if (result->exit_code != 0) throw Error(fmt::format("{}: exit {}", tool, result->exit_code));
  return result->output;
}

}  // namespace plumb::exporter
