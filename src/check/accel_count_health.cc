// accel.count and accel.health (docs/check.md).
#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <set>

#include "check/accel_checks.h"
#include "check/npu_health.h"
#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

// A node has at most a few dozen accelerators; 4096 catches a typo without limiting anyone.
constexpr NumberRange kCountRange{0, 4096, false, true};
constexpr size_t kMostHealthDetails = 4;  // unhealthy chips whose error codes are asked for

// What the vendor's tool lists: each device's bus id ("" when it gives none) and the GPUs it
// names as lost; or the check's verdict when it gave nothing usable.
struct ToolDevices {
  std::vector<std::string> bus_ids;
  std::vector<std::string> lost;
  std::optional<CheckResult> failure;
  std::string tool;
};

ToolDevices nvidia_devices(const AccelRun& run) {
  constexpr std::string_view kFields[] = {"index", "pci.bus_id"};
  ToolDevices devices;
  devices.tool = "nvidia-smi";
  GpuQuery query = query_gpus(run, kFields);
  if (!query.table) {
    devices.failure = query.failure;
    return devices;
  }
  for (size_t row = 0; row < query.table->rows.size(); ++row) {
    devices.bus_ids.push_back(normal_bus_id(query.table->cell(row, "pci.bus_id")));
  }
  devices.lost = query.table->lost;
  return devices;
}

ToolDevices ascend_devices(const AccelRun& run) {
  ToolDevices devices;
  devices.tool = "npu-smi";
  NpuQuery query = query_npus(run);
  if (!query.info) {
    devices.failure = query.failure;
    return devices;
  }
  for (const sysinfo::NpuChip& chip : query.info->chips)
    devices.bus_ids.push_back(normal_bus_id(chip.bus_id));
  return devices;
}

ToolDevices devices_of(AccelVendor vendor, const AccelRun& run) {
  return vendor == AccelVendor::kNvidia ? nvidia_devices(run) : ascend_devices(run);
}

// The PCI addresses the bus shows and the tool does not.
std::vector<std::string> missing_from_tool(const std::vector<std::string>& pci,
                                           const ToolDevices& tool) {
  const std::set<std::string> seen(tool.bus_ids.begin(), tool.bus_ids.end());
  std::vector<std::string> missing;
  for (const std::string& bus : pci) {
    if (!seen.count(bus)) missing.push_back(bus);
  }
  return missing;
}

struct CountInput {
  AccelVendor vendor;
  const PciAccelerators& pci;
  const ToolDevices& tool;
  std::optional<size_t> expected;
};

CheckResult fewer(const CountInput& in, size_t want) {
  const size_t found = in.tool.bus_ids.size();
  const size_t on_bus = in.pci.of(in.vendor).size();
  const std::vector<std::string> missing = missing_from_tool(in.pci.of(in.vendor), in.tool);
  std::string value = fmt::format("{} of {}", found, device_count_text(in.vendor, want));
  if (!missing.empty()) value += fmt::format(": {} lacks {}", in.tool.tool, join(missing, ", "));
  if (!in.tool.lost.empty())
    value += fmt::format("; {} cannot reach {}", in.tool.tool, join(in.tool.lost, ", "));
  if (in.pci.bus_visible) value += fmt::format(" (the PCI bus shows {})", on_bus);
  const std::string expected = device_count_text(in.vendor, want);
  if (!missing.empty()) {
    return critical(
        value, expected,
        fmt::format("the driver does not see {} though the PCI bus does: look for its "
                    "driver messages (dmesg | grep -i {}), then reseat it or reboot the node",
                    missing.front(), missing.front().substr(0, missing.front().rfind('.'))));
  }
  return critical(value, expected,
                  "a device is gone from the PCI bus: check the BMC's event log, the riser and the "
                  "power cabling (lspci -nn | grep -i -e nvidia -e huawei)");
}

CheckResult judge_count(const CountInput& in) {
  const size_t found = in.tool.bus_ids.size();
  const size_t on_bus = in.pci.of(in.vendor).size();
  const size_t want = in.expected ? *in.expected : std::max(found, on_bus);
  if (found < want || !in.tool.lost.empty()) return fewer(in, want);
  std::string value = fmt::format("{} ({}", device_count_text(in.vendor, found), in.tool.tool);
  value += in.pci.bus_visible ? fmt::format("; {} on the PCI bus)", on_bus) : std::string(")");
  const std::string expected =
      in.expected ? device_count_text(in.vendor, *in.expected) : std::string();
  if (found > want) {
    return warning(value, expected,
                   "more than the check file expects: is it this SKU's? (plumb check genconf on a "
                   "known-good node of the SKU writes one)");
  }
  return ok(value, expected);
}

std::optional<AccelVendor> expected_vendor(const CheckSection& section) {
  const std::optional<std::string> text = section.text("vendor");
  if (!text) return std::nullopt;
  const std::optional<AccelVendor> vendor = parse_vendor(*text);
  if (!vendor) {
    throw Error(fmt::format("checks.accel.count.vendor: must be nvidia or ascend, got '{}'",
                            terminal_safe(shorten(*text))));
  }
  return vendor;
}

// The vendor the bus shows, or (bus not visible) the first whose tool is on PATH.
std::optional<AccelVendor> present_vendor(const PciAccelerators& pci) {
  if (!pci.nvidia.empty()) return AccelVendor::kNvidia;
  if (!pci.ascend.empty()) return AccelVendor::kAscend;
  return std::nullopt;
}

std::string want_text(std::optional<size_t> expected, std::optional<AccelVendor> vendor) {
  if (vendor && expected) return device_count_text(*vendor, *expected);
  if (vendor) return *vendor == AccelVendor::kNvidia ? "NVIDIA GPUs" : "Ascend NPUs";
  return fmt::format("{} accelerators", expected.value_or(0));
}

CheckResult none_found(std::optional<size_t> expected, std::optional<AccelVendor> vendor,
                       bool bus_visible) {
  if (!expected && !vendor) return skipped(std::string(kNoAccelerator));
  if (expected && *expected == 0) return ok("no accelerator", "0");
  const std::string want = want_text(expected, vendor);
  const std::string where =
      bus_visible ? "none on the PCI bus"
                  : "the PCI bus is not visible and neither nvidia-smi nor npu-smi is on PATH";
  return critical(fmt::format("{}{}: {}", expected ? "0 of " : "no ", want, where), want,
                  "check that the devices are seated and powered and that the driver is loaded "
                  "(lspci -nn | grep -i -e nvidia -e huawei; lsmod | grep -e nvidia -e drv_pcie)");
}

struct CountWant {
  std::optional<size_t> expected;
  std::optional<AccelVendor> vendor;
};

// The tool gave nothing usable: none found when the bus shows none of the vendor's devices either,
// else the tool's problem with what the bus shows.
CheckResult failed_count(CheckResult failure, const PciAccelerators& pci, AccelVendor vendor,
                         const CountWant& want) {
  if (!pci.bus_visible) return failure;
  if (pci.of(vendor).empty()) return none_found(want.expected, want.vendor, true);
  failure.detail +=
      fmt::format("; the PCI bus shows {}", device_count_text(vendor, pci.of(vendor).size()));
  return failure;
}

}  // namespace

CheckResult run_accel_count(const NodeContext& context, const CheckSection& section) {
  const std::optional<double> expected_number = section.number("expected", kCountRange);
  const std::optional<AccelVendor> want_vendor = expected_vendor(section);
  const std::optional<size_t> expected =
      expected_number ? std::optional<size_t>(static_cast<size_t>(*expected_number)) : std::nullopt;
  const PciAccelerators pci = pci_accelerators(context);
  std::optional<AccelVendor> vendor = present_vendor(pci);
  if (want_vendor && vendor && *vendor != *want_vendor && pci.of(*want_vendor).empty()) {
    return critical(
        fmt::format("{} on the PCI bus", device_count_text(*vendor, pci.of(*vendor).size())),
        want_text(expected, want_vendor),
        "this node is not of the check file's SKU: run it with that SKU's check file");
  }
  if (want_vendor) vendor = want_vendor;
  if (!vendor && pci.bus_visible) return none_found(expected, want_vendor, true);
  const std::vector<AccelVendor> candidates =
      vendor ? std::vector<AccelVendor>{*vendor}
             : std::vector<AccelVendor>{AccelVendor::kNvidia, AccelVendor::kAscend};
  for (const AccelVendor candidate : candidates) {
    const ToolDevices tool = devices_of(candidate, AccelRun{context, section, pci, !vendor});
    if (tool.failure && tool.failure->skipped)
      continue;  // no bus to see, and the tool is not on PATH
    if (tool.failure)
      return failed_count(*tool.failure, pci, candidate, CountWant{expected, want_vendor});
    if (tool.bus_ids.empty() && tool.lost.empty() && !vendor) continue;
    return judge_count(CountInput{candidate, pci, tool, expected});
  }
  return none_found(expected, want_vendor, pci.bus_visible);
}

YAML::Node observe_accel_count(const NodeContext& context) {
  const PciAccelerators pci = pci_accelerators(context);
  const CheckSection none;
  for (const AccelVendor vendor : {AccelVendor::kNvidia, AccelVendor::kAscend}) {
    if (pci.bus_visible && pci.of(vendor).empty()) continue;
    const ToolDevices tool = devices_of(vendor, AccelRun{context, none, pci, !pci.bus_visible});
    // The larger of the two: a genconf node with a device its driver lost must not make the
    // missing device the expectation.
    const size_t count = std::max(pci.of(vendor).size(), tool.failure ? 0 : tool.bus_ids.size());
    if (count == 0) continue;
    YAML::Node node(YAML::NodeType::Map);
    node["expected"] = count;
    node["vendor"] = std::string(vendor_key(vendor));
    return node;
  }
  return YAML::Node(YAML::NodeType::Null);
}

// accel.health

CheckResult nvidia_health(const AccelRun& run) {
  constexpr std::string_view kFields[] = {"index",           "pci.bus_id", "name",
                                          "temperature.gpu", "power.draw", "memory.used"};
  const GpuQuery query = query_gpus(run, kFields);
  if (!query.table) return query.failure;
  const GpuTable& table = *query.table;
  Findings findings;
  for (const std::string& lost : table.lost) {
    findings.add(Status::kCritical,
                 fmt::format("GPU {}: nvidia-smi cannot reach it (Unknown Error)", lost),
                 "the driver lost the GPU: reboot the node and look for its Xid 79 in the kernel "
                 "log (accel.xid); reseat it if it repeats");
  }
  for (size_t row = 0; row < table.rows.size(); ++row) {
    for (const std::string& cell : table.rows[row]) {
      if (cell_state(cell) != CellState::kFault) continue;
      findings.add(Status::kCritical, fmt::format("{}: {}", gpu_name(table, row), cell),
                   fmt::format("reset the GPU when it is idle (nvidia-smi -r -i {}) or reboot the "
                               "node; its Xid in the kernel log says why (accel.xid)",
                               table.cell(row, "index")));
      break;
    }
  }
  return findings.result(fmt::format("{} answer nvidia-smi",
                                     device_count_text(AccelVendor::kNvidia, table.rows.size())),
                         "every GPU answers nvidia-smi");
}

std::vector<ToolRun> run_tools(const NodeContext& context,
                               const std::vector<std::vector<std::string>>& commands) {
  std::vector<std::future<ToolRun>> futures;
  for (const std::vector<std::string>& argv : commands) {
    futures.push_back(
        std::async(std::launch::async, [&context, argv] { return context.tool(argv); }));
  }
  std::vector<ToolRun> runs;
  for (std::future<ToolRun>& f : futures) runs.push_back(f.get());
  return runs;
}

namespace {

// ", error code 80E18008 (...)" from `npu-smi info -t health -i N -c C`, or "".
std::string error_code_text(const ToolRun& tool) {
  if (!tool.ok()) return {};
  try {
    for (const NpuChipHealth& chip : parse_npu_health(tool.output).chips) {
      if (no_error_code(chip.error_code)) continue;
      std::string text = fmt::format(", error code {}", shown_text(chip.error_code));
      if (!no_error_code(chip.error_info))
        text += fmt::format(" ({})", shown_text(chip.error_info));
      return text;
    }
  } catch (const Error&) {
  }
  return {};
}

}  // namespace

CheckResult ascend_health(const AccelRun& run) {
  const NpuQuery query = query_npus(run);
  if (!query.info) return query.failure;
  std::vector<const sysinfo::NpuChip*> unhealthy;
  for (const sysinfo::NpuChip& chip : query.info->chips) {
    if (npu_health_status(chip.health) != Status::kOk) unhealthy.push_back(&chip);
  }
  std::vector<std::vector<std::string>> commands;
  for (size_t i = 0; i < unhealthy.size() && i < kMostHealthDetails; ++i) {
    commands.push_back({"npu-smi", "info", "-t", "health", "-i",
                        std::to_string(unhealthy[i]->npu_id), "-c",
                        std::to_string(unhealthy[i]->chip_id)});
  }
  const std::vector<ToolRun> details = run_tools(run.context, commands);
  Findings findings;
  for (size_t i = 0; i < unhealthy.size(); ++i) {
    const sysinfo::NpuChip& chip = *unhealthy[i];
    const std::string code = i < details.size() ? error_code_text(details[i]) : std::string();
    findings.add(
        npu_health_status(chip.health),
        fmt::format("{}: {}{}", npu_name(*query.info, chip), shown_text(chip.health), code),
        fmt::format("look the error code up in the board's fault-code list (npu-smi info -t "
                    "health -i {0} -c {1}); reset the NPU when it is idle (npu-smi set -t "
                    "reset -i {0} -c {1}) if it persists",
                    chip.npu_id, chip.chip_id));
  }
  return findings.result(
      fmt::format("{} report OK (npu-smi info)",
                  device_count_text(AccelVendor::kAscend, query.info->chips.size())),
      "every NPU's health OK");
}

}  // namespace plumb::check
