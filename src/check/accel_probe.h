// What the accelerator checks share: which accelerators the PCI bus shows (sysfs under the
// context's root, classified by topo/pci_class), running nvidia-smi and npu-smi through the
// context with their failures turned into the check's "unknown", and how a device is named in a
// verdict ("GPU 3 (0000:3b:00.0)").
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "check/check.h"
#include "check/gpu_query.h"
#include "sysinfo/npu_smi.h"

namespace plumb::check {

inline constexpr std::string_view kNoAccelerator = "no NVIDIA or Ascend accelerator on this node";

enum class AccelVendor { kNvidia, kAscend };

std::string_view vendor_key(AccelVendor vendor);  // "nvidia", "ascend" (the check file's word)
std::optional<AccelVendor> parse_vendor(std::string_view key);
// "8 NVIDIA GPUs", "1 Ascend NPU"
std::string device_count_text(AccelVendor vendor, size_t count);

// The accelerators the PCI bus shows under the root: /sys/bus/pci/devices/*/{vendor,class}.
struct PciAccelerators {
  bool bus_visible = false;         // the root has PCI devices at all (a container may not)
  std::vector<std::string> nvidia;  // bus ids, sorted
  std::vector<std::string> ascend;
  const std::vector<std::string>& of(AccelVendor vendor) const;
};
PciAccelerators pci_accelerators(const NodeContext& context);

// One accelerator check's run: the handler of the vendor present. When the bus is not visible
// under the root, the tools decide: NVIDIA's first, then Ascend's, and "no accelerator" when
// neither tool is on PATH (`tool_optional` tells the handler to skip rather than be unknown).
struct AccelRun {
  const NodeContext& context;
  const CheckSection& section;
  const PciAccelerators& pci;
  bool tool_optional = false;
};
using AccelHandler = std::function<CheckResult(const AccelRun&)>;
CheckResult run_for_vendor(const NodeContext& context, const CheckSection& section,
                           const AccelHandler& nvidia, const AccelHandler& ascend);

// nvidia-smi --query-gpu=FIELDS --format=csv,nounits, parsed; or the check's verdict when it gave
// nothing usable (unknown naming the tool's problem; skipped when the tool is missing and
// optional). `fields` starts with index and pci.bus_id so rows can be named.
struct GpuQuery {
  std::optional<GpuTable> table;
  CheckResult failure;
  bool refused =
      false;  // nvidia-smi ran and exited non-zero (an unknown field name, a driver fault)
};
GpuQuery query_gpus(const AccelRun& run, std::span<const std::string_view> fields);

// npu-smi info, parsed; or the check's verdict.
struct NpuQuery {
  std::optional<sysinfo::NpuSmiInfo> info;
  CheckResult failure;
};
NpuQuery query_npus(const AccelRun& run);

// The unknown (or skipped) for a tool run that gave nothing usable; its first output line is
// added when it printed one ("nvidia-smi: exit status 9: NVIDIA-SMI has failed because ...").
CheckResult tool_failure(const ToolRun& run, bool tool_optional);

// "GPU 3 (0000:3b:00.0)" for a row of a table queried with index and pci.bus_id.
std::string gpu_name(const GpuTable& table, size_t row);
// "NPU 3 chip 0 (0000:c1:00.0)"; "NPU 3 (...)" when every NPU has one chip.
std::string npu_name(const sysinfo::NpuSmiInfo& info, const sysinfo::NpuChip& chip);

// Findings of one check across devices: the worst status, and the devices' lines in order.
struct Findings {
  Status worst = Status::kOk;
  std::vector<std::string> lines;  // "GPU 3 (0000:3b:00.0): 97 C"
  std::string action;              // the detail of the first finding of the worst status
  void add(Status status, std::string line, std::string_view action_if_worst);
  // ok(ok_value, expected) when nothing was found, else the status with the lines joined by "; ".
  CheckResult result(std::string ok_value, std::string expected) const;
};

}  // namespace plumb::check
