// The accelerator checks of plumb check node: one row per check, each strategy in accel_*.cc
// (docs/check.md).
#include "check/accel_checks.h"
#include "check/check.h"

namespace plumb::check {
namespace {

// A row whose run dispatches on the vendor the node has.
CheckSpec vendor_row(std::string name, std::string summary, std::vector<std::string> keys,
                     AccelHandler nvidia, AccelHandler ascend) {
  CheckSpec spec;
  spec.name = std::move(name);
  spec.summary = std::move(summary);
  spec.keys = std::move(keys);
  spec.run = [nvidia, ascend](const NodeContext& context, const CheckSection& section) {
    return run_for_vendor(context, section, nvidia, ascend);
  };
  return spec;
}

}  // namespace

std::vector<CheckSpec> accelerator_checks() {
  std::vector<CheckSpec> rows;
  rows.push_back(CheckSpec{
      "accel.count",
      "accelerators nvidia-smi / npu-smi and the PCI bus show, against the expected count",
      {"expected", "vendor"},
      run_accel_count,
      observe_accel_count});
  rows.push_back(vendor_row(
      "accel.health",
      "every GPU answers nvidia-smi; every NPU's npu-smi health is OK (with its error codes)", {},
      nvidia_health, ascend_health));
  rows.push_back(vendor_row(
      "accel.ecc", "uncorrectable ECC errors, pending or failed row remaps and page retirements",
      {"warning", "critical", "retired_pages", "uncorrectable_rows"}, nvidia_ecc, ascend_ecc));
  rows.push_back(vendor_row(
      "accel.xid", "NVIDIA Xid events in the kernel log since boot, by NVIDIA's Xid catalog",
      {"ignore"}, nvidia_xid, ascend_xid));
  rows.push_back(vendor_row("accel.clocks", "no hardware, thermal or power-brake clock slowdown",
                            {}, nvidia_clocks, ascend_clocks));
  rows.push_back(vendor_row("accel.temperature",
                            "every device below the 85 C warning and 95 C critical temperature",
                            {"warning", "critical"}, nvidia_temperature, ascend_temperature));
  return rows;
}

}  // namespace plumb::check
