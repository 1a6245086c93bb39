#include "check/accel_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"
#include "topo/pci_class.h"

namespace plumb::check {
namespace {

constexpr std::string_view kPciDevices = "/sys/bus/pci/devices";
constexpr int kClassShift =
    8;  // sysfs class 0x030200: base, subclass, prog-if; rules use base<<8|sub
constexpr size_t kMostLines = 8;  // devices named in one verdict; the rest are counted

std::optional<unsigned long> hex_value(const std::optional<std::string>& text) {
  if (!text || text->size() < 3 || text->compare(0, 2, "0x") != 0) return std::nullopt;
  unsigned long value = 0;
  const char* begin = text->data() + 2;
  const char* end = text->data() + text->size();
  const auto [stop, ec] = std::from_chars(begin, end, value, 16);
  if (ec != std::errc() || stop != end) return std::nullopt;
  return value;
}

int severity_level(Status status) {  // severity order for the findings: ok < warning < critical
  return status == Status::kCritical ? 2 : status == Status::kWarning ? 1 : 0;
}

std::string first_line(const std::string& output) {
  const std::string_view text = trim_blanks(std::string_view(output).substr(0, output.find('\n')));
  return shown_text(text);
}

}  // namespace

std::string_view vendor_key(AccelVendor vendor) {
  return vendor == AccelVendor::kNvidia ? "nvidia" : "ascend";
}

std::optional<AccelVendor> parse_vendor(std::string_view key) {
  if (key == "nvidia") return AccelVendor::kNvidia;
  if (key == "ascend") return AccelVendor::kAscend;
  return std::nullopt;
}

std::string device_count_text(AccelVendor vendor, size_t count) {
  const bool nvidia = vendor == AccelVendor::kNvidia;
  return fmt::format("{} {} {}{}", count, nvidia ? "NVIDIA" : "Ascend", nvidia ? "GPU" : "NPU",
                     count == 1 ? "" : "s");
}

const std::vector<std::string>& PciAccelerators::of(AccelVendor vendor) const {
  return vendor == AccelVendor::kNvidia ? nvidia : ascend;
}

PciAccelerators pci_accelerators(const NodeContext& context) {
  PciAccelerators found;
  for (const std::string& name : context.list(kPciDevices)) {
    found.bus_visible = true;
    const std::string dir = std::string(kPciDevices) + "/" + name;
    const std::optional<unsigned long> vendor = hex_value(context.read_value(dir + "/vendor"));
    const std::optional<unsigned long> klass = hex_value(context.read_value(dir + "/class"));
    if (!vendor || !klass) continue;
    const auto vendor_id = static_cast<uint16_t>(*vendor);
    const auto class_id = static_cast<uint16_t>(*klass >> kClassShift);
    if (topo::classify_pci(vendor_id, class_id, false) != topo::PciKind::kAccelerator) continue;
    if (vendor_id == topo::kVendorNvidia) found.nvidia.push_back(normal_bus_id(name));
    if (vendor_id == topo::kVendorHuawei) found.ascend.push_back(normal_bus_id(name));
  }
  std::sort(found.nvidia.begin(), found.nvidia.end());
  std::sort(found.ascend.begin(), found.ascend.end());
  return found;
}

CheckResult run_for_vendor(const NodeContext& context, const CheckSection& section,
                           const AccelHandler& nvidia, const AccelHandler& ascend) {
  const PciAccelerators pci = pci_accelerators(context);
  if (pci.bus_visible) {
    if (!pci.nvidia.empty()) return nvidia(AccelRun{context, section, pci, false});
    if (!pci.ascend.empty()) return ascend(AccelRun{context, section, pci, false});
    return skipped(std::string(kNoAccelerator));
  }
  // No PCI devices under the root (a container, a partial copy of a node): the tools decide.
  for (const AccelHandler* handler : {&nvidia, &ascend}) {
    CheckResult result = (*handler)(AccelRun{context, section, pci, true});
    if (!result.skipped || result.detail != kNoAccelerator) return result;
  }
  return skipped(std::string(kNoAccelerator));
}

CheckResult tool_failure(const ToolRun& run, bool tool_optional) {
  if (run.state == ToolRun::State::kNotFound && tool_optional)
    return skipped(std::string(kNoAccelerator));
  std::string detail = run.problem();
  if (run.state == ToolRun::State::kDone && !first_line(run.output).empty()) {
    detail += ": " + first_line(run.output);
  }
  return unknown(detail);
}

GpuQuery query_gpus(const AccelRun& run, std::span<const std::string_view> fields) {
  std::vector<std::string> names(fields.begin(), fields.end());
  const ToolRun tool =
      run.context.tool({"nvidia-smi", "--query-gpu=" + join(names, ","), "--format=csv,nounits"});
  GpuQuery query;
  if (tool.state != ToolRun::State::kDone) {
    query.failure = tool_failure(tool, run.tool_optional);
    return query;
  }
  try {
    GpuTable table = parse_gpu_query(tool.output);
    // A lost GPU makes nvidia-smi fail but still print the others: the rows count.
    if (tool.exit_code == 0 || !table.lost.empty()) query.table = std::move(table);
  } catch (const Error& e) {
    if (tool.exit_code == 0) {
      query.failure = unknown(e.what());
      return query;
    }
  }
  if (!query.table) {
    query.failure = tool_failure(tool, run.tool_optional);
    query.refused = true;
  }
  return query;
}

NpuQuery query_npus(const AccelRun& run) {
  const ToolRun tool = run.context.tool({"npu-smi", "info"});
  NpuQuery query;
  if (!tool.ok()) {
    query.failure = tool_failure(tool, run.tool_optional);
    return query;
  }
  try {
    query.info = sysinfo::parse_npu_smi_info(tool.output);
  } catch (const Error& e) {
    query.failure = unknown(e.what());
  }
  return query;
}

std::string gpu_name(const GpuTable& table, size_t row) {
  const std::string_view index = table.cell(row, "index");
  const std::string_view bus = table.cell(row, "pci.bus_id");
  const std::string label =
      index.empty() ? fmt::format("GPU #{}", row) : fmt::format("GPU {}", index);
  if (bus.empty() || cell_state(bus) != CellState::kValue) return label;
  return fmt::format("{} ({})", label, normal_bus_id(bus));
}

std::string npu_name(const sysinfo::NpuSmiInfo& info, const sysinfo::NpuChip& chip) {
  std::map<int, int> chips_per_npu;
  for (const sysinfo::NpuChip& c : info.chips) ++chips_per_npu[c.npu_id];
  const bool several = std::any_of(chips_per_npu.begin(), chips_per_npu.end(),
                                   [](const auto& entry) { return entry.second > 1; });
  std::string label = several ? fmt::format("NPU {} chip {}", chip.npu_id, chip.chip_id)
                              : fmt::format("NPU {}", chip.npu_id);
  if (!chip.bus_id.empty()) label += fmt::format(" ({})", normal_bus_id(chip.bus_id));
  return label;
}

void Findings::add(Status status, std::string line, std::string_view action_if_worst) {
  if (severity_level(status) > severity_level(worst)) {
    worst = status;
    action = std::string(action_if_worst);
  }
  lines.push_back(std::move(line));
}

CheckResult Findings::result(std::string ok_value, std::string expected) const {
  std::vector<std::string> shown(
      lines.begin(), lines.begin() + static_cast<long>(std::min(lines.size(), kMostLines)));
  std::string value = join(shown, "; ");
  if (lines.size() > kMostLines) value += fmt::format("; and {} more", lines.size() - kMostLines);
  if (worst == Status::kOk)
    return ok(value.empty() ? std::move(ok_value) : ok_value + "; " + value, std::move(expected));
  if (worst == Status::kWarning) return warning(value, std::move(expected), action);
  return critical(value, std::move(expected), action);
}

}  // namespace plumb::check
