// libFuzzer target: any bytes as the outputs the accelerator checks read -- nvidia-smi's
// --query-gpu CSV, npu-smi's health and ECC key/value forms, the kernel log's Xid lines -- and
// each cell as the checks read it. Parsing must return or throw plumb::Error; every row has one
// cell per column and every PCI address comes back in sysfs's form.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "check/gpu_query.h"
#include "check/kernel_log.h"
#include "check/npu_health.h"
#include "common/error.h"

namespace {

void check_address(const std::string& bus) {
  // "dddd:bb:dd.f" at least: a domain of 4+ hex digits, then 8 characters.
  if (bus.size() < 12 || bus[bus.size() - 8] != ':' || bus[bus.size() - 5] != ':' ||
      bus[bus.size() - 2] != '.') {
    std::abort();
  }
}

void gpu_query(std::string_view text) {
  try {
    const plumb::check::GpuTable table = plumb::check::parse_gpu_query(text);
    for (const auto& row : table.rows) {
      if (row.size() != table.columns.size()) std::abort();
      for (const std::string& cell : row) {
        (void)plumb::check::cell_state(cell);
        (void)plumb::check::cell_number(cell);
        (void)plumb::check::cell_yes(cell);
        (void)plumb::check::cell_mask(cell);
        if (const auto bus = plumb::check::pci_address(cell)) check_address(*bus);
      }
    }
  } catch (const plumb::Error&) {
  }
}

void npu(std::string_view text) {
  try {
    const plumb::check::NpuHealth health = plumb::check::parse_npu_health(text);
    if (health.chips.empty()) std::abort();
  } catch (const plumb::Error&) {
  }
  try {
    const auto errors = plumb::check::npu_double_bit_errors(text);
    if (errors && *errors < 0) std::abort();
  } catch (const plumb::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpu_query(text);
  npu(text);
  for (const plumb::check::XidEvent& event : plumb::check::parse_xid_events(text)) {
    if (event.code < 0) std::abort();
    (void)plumb::check::find_xid(event.code);
  }
  return 0;
}
