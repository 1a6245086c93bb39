#include "plan/hardware.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <span>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/regex.h"
#include "common/strings.h"
#include "common/yaml_strict.h"

namespace plumb::plan {
namespace {

using Problems = std::vector<std::string>;

// Devices in one node: far above any real system, low enough for an int.
constexpr int kMaxDevicesPerNode = 1'000'000;

// Every key a hardware file may have, with the values it accepts. The upper bounds are far above
// any device built (B200: 2,250 dense BF16 TFLOP/s, 192 GB, 8 TB/s, 900 GB/s NVLink, 1,000 W),
// the lower ones far below any accelerator (1 GFLOP/s, 1 MB, 1 GB/s): they catch a mistyped
// exponent, not a future chip, and keep every time the planner derives printable.
struct Key {
  const char* name;
  NumberRange range;
};
constexpr Key kNumbers[] = {
    {"hbm_gb", {1e-3, 1e6}},
    {"hbm_tbps", {1e-3, 1e4}},
    {"devices_per_node", {1, kMaxDevicesPerNode, false, true}},
    {"scaleup_gbps_per_device", {1e-2, 1e6}},
    {"scaleout_gbps_per_device", {1e-2, 1e6}},
    {"tdp_w", {0, 1e6, true}},
    {"price_usd", {0, 1e9, true}},
    {"rent_usd_per_hour", {0, 1e6, true}},
    {"efficiency", {1e-2, 1}},
};
constexpr NumberRange kPeakTflops{1e-3, 1e6};

std::vector<std::string> known_keys() {
  std::vector<std::string> keys = {"name", "peak_tflops"};
  for (const Key& k : kNumbers) keys.emplace_back(k.name);
  keys.insert(keys.end(), {"price_date", "rent_date"});
  return keys;
}

const NumberRange& range_of(const char* key) {
  for (const Key& k : kNumbers) {
    if (std::string_view(k.name) == key) return k.range;
  }
  return kPeakTflops;
}

std::optional<double> number(const YAML::Node& root, const char* key, const NumberRange& range,
                             const std::string& where, Problems& problems) {
  const YAML::Node value = root[key];
  if (!value) return std::nullopt;
  std::string problem;
  if (auto v = yaml_number(value, range, problem)) return v;
  problems.push_back(fmt::format("{}:{}: '{}' {}", where, yaml_line(value), key, problem));
  return std::nullopt;
}

std::optional<double> optional(const YAML::Node& root, const char* key, const std::string& path,
                               Problems& problems) {
  return number(root, key, range_of(key), path, problems);
}

double required(const YAML::Node& root, const char* key, const std::string& path,
                Problems& problems) {
  if (!root[key]) problems.push_back(fmt::format("{}: missing key '{}'", path, key));
  return optional(root, key, path, problems).value_or(0);
}

void add_key_problems(const YAML::Node& map, std::span<const std::string> known,
                      std::string_view where, const std::string& path, Problems& problems) {
  for (const YamlProblem& p : key_problems(map, known, where)) {
    problems.push_back(fmt::format("{}:{}: {}", path, p.line, p.message));
  }
}

std::map<std::string, double> read_peaks(const YAML::Node& node, const std::string& path,
                                         Problems& problems) {
  std::map<std::string, double> peaks;
  if (!node || !node.IsMap()) {
    problems.push_back(fmt::format("{}: peak_tflops: expected a map of precision -> TFLOP/s", path));
    return peaks;
  }
  const std::vector<std::string> known(std::begin(kPrecisions), std::end(kPrecisions));
  add_key_problems(node, known, "peak_tflops", path, problems);
  for (const std::string& precision : known) {
    if (auto v = number(node, precision.c_str(), kPeakTflops, path, problems)) {
      peaks[precision] = *v;
    }
  }
  return peaks;
}

std::string read_name(const YAML::Node& root, const std::string& path, Problems& problems) {
  if (!root["name"]) {
    problems.push_back(fmt::format("{}: missing key 'name'", path));
  } else if (!root["name"].IsScalar()) {
    problems.push_back(fmt::format("{}:{}: 'name' must be a string", path, yaml_line(root["name"])));
  } else {
    return root["name"].Scalar();
  }
  return {};
}

// "2025-06" or "2025-06-30": when a price was quoted, so that a reader can judge its age.
std::string read_date(const YAML::Node& root, const char* key, const std::string& path,
                      Problems& problems) {
  const YAML::Node value = root[key];
  if (!value) return {};
  static const Regex kDate(R"(\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)");
  if (value.IsScalar() && kDate.match(value.Scalar())) return value.Scalar();
  problems.push_back(fmt::format("{}:{}: '{}' must be a date YYYY-MM or YYYY-MM-DD, got '{}'", path,
                                 yaml_line(value), key, value.IsScalar() ? value.Scalar() : "a collection"));
  return {};
}

HardwareSpec hardware_from_root(const YAML::Node& root, const std::string& path) {
  if (!root.IsMap()) throw Error(fmt::format("{}: expected a map of hardware keys", path));
  Problems problems;
  add_key_problems(root, known_keys(), {}, path, problems);
  HardwareSpec h;
  h.name = read_name(root, path, problems);
  h.peak_tflops = read_peaks(root["peak_tflops"], path, problems);
  h.hbm_gb = required(root, "hbm_gb", path, problems);
  h.hbm_tbps = required(root, "hbm_tbps", path, problems);
  if (auto n = optional(root, "devices_per_node", path, problems)) {
    h.devices_per_node = static_cast<int>(*n);
  }
  h.scaleup_gbps_per_device = optional(root, "scaleup_gbps_per_device", path, problems);
  h.scaleout_gbps_per_device = optional(root, "scaleout_gbps_per_device", path, problems);
  h.tdp_w = optional(root, "tdp_w", path, problems);
  h.price_usd = optional(root, "price_usd", path, problems);
  h.rent_usd_per_hour = optional(root, "rent_usd_per_hour", path, problems);
  h.efficiency = optional(root, "efficiency", path, problems);
  h.price_date = read_date(root, "price_date", path, problems);
  h.rent_date = read_date(root, "rent_date", path, problems);
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return h;
}

}  // namespace

HardwareSpec load_hardware(const std::string& path) {
  return hardware_from_root(load_yaml_file(path, "hardware file"), path);
}

HardwareSpec hardware_from_text(std::string_view text, const std::string& source) {
  return hardware_from_root(load_yaml(text, source), source);
}

}  // namespace plumb::plan
