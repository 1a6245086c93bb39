#include "plan/hardware.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::plan {
namespace {

using Problems = std::vector<std::string>;

// Devices in one node: far above any real system, low enough for an int.
constexpr int kMaxDevicesPerNode = 1'000'000;

std::optional<double> positive(const YAML::Node& root, const char* key, const std::string& path,
                               Problems& problems) {
  const YAML::Node value = root[key];
  if (!value) return std::nullopt;
  try {
    const double v = value.as<double>();
    if (std::isfinite(v) && v > 0) return v;
  } catch (const YAML::Exception&) {
  }
  problems.push_back(fmt::format("{}:{}: '{}' must be a positive number", path,
                                 value.Mark().line + 1, key));
  return std::nullopt;
}

double required(const YAML::Node& root, const char* key, const std::string& path,
                Problems& problems) {
  if (!root[key]) problems.push_back(fmt::format("{}: missing key '{}'", path, key));
  return positive(root, key, path, problems).value_or(0);
}

std::map<std::string, double> read_peaks(const YAML::Node& node, const std::string& path,
                                         Problems& problems) {
  std::map<std::string, double> peaks;
  if (!node || !node.IsMap()) {
    problems.push_back(fmt::format("{}: peak_tflops: expected a map of precision -> TFLOP/s", path));
    return peaks;
  }
  const std::vector<std::string> known(std::begin(kPrecisions), std::end(kPrecisions));
  for (const auto& item : node) {
    if (!item.first.IsScalar()) {
      problems.push_back(fmt::format("{}:{}: 'peak_tflops' keys must be precision names", path,
                                     item.first.Mark().line + 1));
      continue;
    }
    const std::string precision = item.first.as<std::string>();
    if (std::find(known.begin(), known.end(), precision) == known.end()) {
      problems.push_back(unknown_name(path + ": peak_tflops", "precision", precision, known));
      continue;
    }
    if (auto v = positive(node, precision.c_str(), path + ": peak_tflops", problems)) {
      peaks[precision] = *v;
    }
  }
  return peaks;
}

}  // namespace

HardwareSpec load_hardware(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw Error(fmt::format("{}: cannot read the hardware file", path));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) throw Error(fmt::format("{}: expected a map of hardware keys", path));
  Problems problems;
  HardwareSpec h;
  if (!root["name"]) {
    problems.push_back(fmt::format("{}: missing key 'name'", path));
  } else if (!root["name"].IsScalar()) {
    problems.push_back(
        fmt::format("{}:{}: 'name' must be a string", path, root["name"].Mark().line + 1));
  } else {
    h.name = root["name"].as<std::string>();
  }
  h.peak_tflops = read_peaks(root["peak_tflops"], path, problems);
  h.hbm_gb = required(root, "hbm_gb", path, problems);
  h.hbm_tbps = required(root, "hbm_tbps", path, problems);
  if (auto n = positive(root, "devices_per_node", path, problems)) {
    if (*n == std::floor(*n) && *n <= kMaxDevicesPerNode) {
      h.devices_per_node = static_cast<int>(*n);
    } else {
      problems.push_back(fmt::format("{}:{}: 'devices_per_node' must be a whole number from 1 to {}",
                                     path, root["devices_per_node"].Mark().line + 1,
                                     kMaxDevicesPerNode));
    }
  }
  h.scaleup_gbps_per_device = positive(root, "scaleup_gbps_per_device", path, problems);
  h.scaleout_gbps_per_device = positive(root, "scaleout_gbps_per_device", path, problems);
  h.tdp_w = positive(root, "tdp_w", path, problems);
  h.price_usd = positive(root, "price_usd", path, problems);
  h.cloud_usd_per_hour = positive(root, "cloud_usd_per_hour", path, problems);
  h.efficiency = positive(root, "efficiency", path, problems);
  if (h.efficiency && *h.efficiency > 1) {
    problems.push_back(fmt::format("{}: efficiency {} is a fraction of peak: at most 1", path,
                                   *h.efficiency));
  }
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return h;
}

}  // namespace plumb::plan
