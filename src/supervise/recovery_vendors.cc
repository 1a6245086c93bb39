// NVIDIA and Ascend, each as the handful of small functions the built-in recovery steps need.
// Output formats: docs/run.md "Recovery steps"; tests/fixtures/run/bin holds stand-ins that print
// them.
#include "supervise/recovery_vendors.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>

#include "common/error.h"
#include "common/strings.h"
#include "sysinfo/npu_smi.h"

namespace plumb::supervise {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kRdmaActive = "4: ACTIVE";     // ib_core's port state text when up
constexpr std::string_view kHccnLinkUp = "link status: UP";  // hccn_tool -link -g when up

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::string& line : split_list(text, '\n')) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

std::optional<long> number_of(std::string_view word) {
  long value = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size() || value < 0) return std::nullopt;
  return value;
}

// Runs a listing command; a non-zero exit fails the step with its text.
std::string listing(StepContext& context, const std::vector<std::string>& argv) {
  const ToolResult result = context.run(argv);
  if (result.exit_code != 0) {
    throw Error(fmt::format("'{}' exited {}", join(argv, " "), result.exit_code));
  }
  return result.output;
}

// ---- NVIDIA: nvidia-smi queries in CSV, the RDMA ports' state in sysfs.

std::vector<RecoveryDevice> nvidia_devices(StepContext& context) {
  const std::vector<std::string> argv{"nvidia-smi", "--query-gpu=index", "--format=csv,noheader"};
  std::vector<RecoveryDevice> devices;
  for (const std::string& line : lines_of(listing(context, argv))) {
    const std::optional<long> index = number_of(line);
    if (!index) {
      throw Error(fmt::format("'{}': expected a GPU index on each line, got '{}'",
                              join(argv, " "), terminal_safe(line)));
    }
    const std::string name = std::to_string(*index);
    devices.push_back({name, static_cast<int>(*index), {"nvidia-smi", "--gpu-reset", "-i", name}});
  }
  return devices;
}

// "12345, python" per line; lines without a process id ("No running processes found") are none.
std::vector<DeviceHolder> nvidia_holders(StepContext& context) {
  std::vector<std::string> argv{"nvidia-smi", "--query-compute-apps=pid,process_name",
                                "--format=csv,noheader"};
  if (!context.plan().devices.empty()) {
    std::vector<std::string> ids;
    for (int id : context.plan().devices) ids.push_back(std::to_string(id));
    argv.insert(argv.end(), {"-i", join(ids, ",")});
  }
  std::vector<DeviceHolder> holders;
  for (const std::string& line : lines_of(listing(context, argv))) {
    const size_t comma = line.find(',');
    const std::optional<long> pid = number_of(line.substr(0, comma));
    if (!pid) continue;
    const std::vector<std::string> rest =
        comma == std::string::npos ? std::vector<std::string>{} : split_list(line.substr(comma + 1));
    holders.push_back({*pid, rest.empty() ? "" : rest[0]});
  }
  return holders;
}

// Every RDMA port: <sysfs>/class/infiniband/<device>/ports/<port>/state, named "<device>/<port>".
std::vector<LinkTarget> rdma_ports(StepContext& context) {
  std::vector<LinkTarget> targets;
  const fs::path root = fs::path(context.plan().sysfs_root) / "class" / "infiniband";
  std::error_code error;
  for (const auto& device : fs::directory_iterator(root, error)) {
    std::error_code port_error;
    for (const auto& port : fs::directory_iterator(device.path() / "ports", port_error)) {
      const std::string name = device.path().filename().string() + "/" + port.path().filename().string();
      targets.push_back({name, {}, (port.path() / "state").string()});
    }
  }
  std::sort(targets.begin(), targets.end(),
            [](const LinkTarget& a, const LinkTarget& b) { return a.name < b.name; });
  return targets;
}

bool rdma_port_active(StepContext&, const LinkTarget& target) {
  std::ifstream in(target.state_file);
  std::string state;
  std::getline(in, state);
  while (!state.empty() && (state.back() == ' ' || state.back() == '\r')) state.pop_back();
  return state == kRdmaActive;
}

// ---- Ascend: npu-smi info's tables, npu-smi set -t reset, hccn_tool -link -g.

sysinfo::NpuSmiInfo npu_smi_info(StepContext& context) {
  return sysinfo::parse_npu_smi_info(listing(context, {"npu-smi", "info"}));
}

std::vector<RecoveryDevice> ascend_devices(StepContext& context) {
  std::vector<RecoveryDevice> devices;
  for (const sysinfo::NpuChip& chip : npu_smi_info(context).chips) {
    devices.push_back({std::to_string(chip.logical_id), chip.npu_id,
                       {"npu-smi", "set", "-t", "reset", "-i", std::to_string(chip.npu_id), "-c",
                        std::to_string(chip.chip_id)}});
  }
  return devices;
}

std::vector<DeviceHolder> ascend_holders(StepContext& context) {
  const std::vector<int>& selected = context.plan().devices;
  std::vector<DeviceHolder> holders;
  for (const sysinfo::NpuProcess& process : npu_smi_info(context).processes) {
    if (selected.empty() ||
        std::find(selected.begin(), selected.end(), process.npu_id) != selected.end()) {
      holders.push_back({process.pid, process.name});
    }
  }
  return holders;
}

std::vector<LinkTarget> ascend_links(StepContext& context) {
  std::vector<LinkTarget> targets;
  for (const RecoveryDevice& device : context.devices()) {
    targets.push_back({device.name, {"hccn_tool", "-i", device.name, "-link", "-g"}, ""});
  }
  return targets;
}

bool hccn_link_up(StepContext& context, const LinkTarget& target) {
  const ToolResult result = context.run(target.argv);
  return result.exit_code == 0 && result.output.find(kHccnLinkUp) != std::string::npos;
}

}  // namespace

const std::vector<VendorStrategy>& vendor_strategies() {
  // npu-smi's reset may ask for confirmation on some versions: "Y" answers it, and a version that
  // does not ask never reads it.
  static const std::vector<VendorStrategy> strategies{
      {"nvidia", "nvidia-smi", {}, "", nvidia_devices, nvidia_holders, rdma_ports,
       rdma_port_active},
      {"ascend", "npu-smi", {"hccn_tool"}, "Y\n", ascend_devices, ascend_holders, ascend_links,
       hccn_link_up},
  };
  return strategies;
}

const VendorStrategy* find_vendor(std::string_view vendor) {
  for (const VendorStrategy& strategy : vendor_strategies()) {
    if (strategy.vendor == vendor) return &strategy;
  }
  return nullptr;
}

}  // namespace plumb::supervise
