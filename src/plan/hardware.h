// `plumb plan`'s accelerator description (data/hardware/*.yaml). Values a source does not give
// are absent (std::nullopt), never zero: the predictor says what it could not compute.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace plumb::plan {

// Energy and time over a run or a purchase: the TDP's watts over hours, in MWh.
inline constexpr double kHoursPerDay = 24;
inline constexpr double kWattHoursPerMWh = 1e6;

struct HardwareSpec {
  std::string name;
  std::map<std::string, double> peak_tflops;  // dense TFLOP/s by precision: bf16, fp16, fp8, fp4
  double hbm_gb = 0;
  double hbm_tbps = 0;
  std::optional<int> devices_per_node;
  std::optional<double> scaleup_gbps_per_device;   // one direction, GB/s
  std::optional<double> scaleout_gbps_per_device;  // one direction, GB/s
  std::optional<double> tdp_w;
  std::optional<double> price_usd;          // to buy one device (in its share of a server)
  std::optional<double> rent_usd_per_hour;  // to rent one device for an hour
  std::string price_date;                   // when price_usd was quoted: "YYYY-MM" or "YYYY-MM-DD"
  std::string rent_date;                    // when rent_usd_per_hour was quoted
  std::optional<double> efficiency;  // achievable fraction of peak for large GEMMs
};

// The precisions peak_tflops may name.
inline constexpr const char* kPrecisions[] = {"bf16", "fp16", "fp8", "fp4"};

// Reads a hardware file; every problem at once in one plumb::Error naming the file and key.
HardwareSpec load_hardware(const std::string& path);
// The same from a file's text; `source` names it in messages.
HardwareSpec hardware_from_text(std::string_view text, const std::string& source);

}  // namespace plumb::plan
