#include "check/kernel_log.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "check/gpu_query.h"
#include "common/number_range.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

constexpr std::string_view kXidMark = "NVRM: Xid (";
constexpr std::string_view kGpuMark = "NVRM: The NVIDIA GPU ";
constexpr std::string_view kFallenOff = "fallen off the bus";
constexpr int kXidFallenOff = 79;

constexpr std::string_view kResetGpu =
    "reset the GPU when it is idle (nvidia-smi -r -i N) or reboot the node";

// NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html): its
// "immediate action" sorts the codes. RESTART_APP is the job's own fault (warning: it may be the
// node if it repeats across jobs), IGNORE is ok; RESET_GPU, RESTART_BM and CONTACT_SUPPORT are
// critical. Azure's aznhc (customTests/azure_gpu_xid.nhc) fails a node on 48 56 57 58 62 63 64 65
// 68 69 73 74 79 80 81 92 119 120; every one of those is critical here too.
constexpr std::array<XidInfo, 31> kXids = {{
    {13, Status::kWarning, "graphics engine exception",
     "usually the job's own illegal instruction or address; if it repeats under other jobs, run "
     "dcgmi diag -r 2 on this GPU"},
    {31, Status::kWarning, "GPU memory page fault",
     "usually the job's own illegal address; if it repeats under other jobs, run dcgmi diag -r 2 "
     "on this GPU"},
    {43, Status::kOk, "GPU stopped processing (the job's own fault)", "nothing to do on the node"},
    {45, Status::kOk, "preemptive cleanup after an earlier error", "nothing to do on the node"},
    {48, Status::kCritical, "double-bit ECC error",
     "reset the GPU (nvidia-smi -r -i N), then check its row remapping (nvidia-smi -q -d "
     "ROW_REMAPPER); replace it if it repeats"},
    {56, Status::kCritical, "display engine error", kResetGpu},
    {57, Status::kCritical, "error programming video memory interface", kResetGpu},
    {58, Status::kCritical, "unstable video memory interface", kResetGpu},
    {61, Status::kCritical, "internal micro-controller breakpoint", kResetGpu},
    {62, Status::kCritical, "internal micro-controller halt", kResetGpu},
    {63, Status::kCritical, "ECC page retirement or row remapping recorded",
     "reset the GPU so the remapping takes effect (nvidia-smi -r -i N), then run plumb check node "
     "--only accel.ecc"},
    {64, Status::kCritical, "ECC page retirement or row remapping failed",
     "the GPU could not record a bad row: drain the node and replace the GPU"},
    {65, Status::kCritical, "video processor exception", kResetGpu},
    {68, Status::kCritical, "video decoder (NVDEC) exception", kResetGpu},
    {69, Status::kCritical, "graphics engine class error", kResetGpu},
    {73, Status::kCritical, "video encoder (NVENC) error", kResetGpu},
    {74, Status::kCritical, "NVLink error",
     "check the GPU's NVLinks (nvidia-smi nvlink -s -i N; nvidia-smi nvlink -e -i N); reset the "
     "GPU, reseat the baseboard if it repeats"},
    {79, Status::kCritical, "GPU has fallen off the bus",
     "reboot, then check the GPU's PCIe link and power (lspci -vv -s BUS | grep LnkSta); reseat "
     "the card or riser if it repeats"},
    {80, Status::kCritical, "corrupted data sent to the GPU", kResetGpu},
    {81, Status::kCritical, "VGA subsystem error", kResetGpu},
    {92, Status::kCritical, "high single-bit ECC error rate",
     "drain the node and run dcgmi diag -r 3 on the GPU; replace it if the rate stays high"},
    {94, Status::kWarning, "contained ECC error (the job using the memory was stopped)",
     "reset the GPU when it is idle so the pending row remap takes effect (see accel.ecc)"},
    {95, Status::kCritical, "uncontained ECC error (every job on the GPU was stopped)", kResetGpu},
    {109, Status::kWarning, "context switch timeout",
     "usually the job; if it repeats under other jobs, reset the GPU and update the driver"},
    {119, Status::kCritical, "GSP RPC timeout",
     "reset the GPU or reboot the node; update the driver if it repeats"},
    {120, Status::kCritical, "GSP error",
     "reset the GPU or reboot the node; update the driver if it repeats"},
    {121, Status::kCritical, "C2C link error", "reboot the node; replace the module if it repeats"},
    {122, Status::kCritical, "SPI PMU RPC read failure", kResetGpu},
    {123, Status::kCritical, "SPI PMU RPC write failure", kResetGpu},
    {140, Status::kCritical, "unrecovered ECC error", kResetGpu},
    {154, Status::kCritical, "GPU recovery action changed",
     "do what the Xid 154 line asks (GPU reset, node reboot or drain); nvidia-smi -q shows the "
     "pending action"},
}};

// "0000:3b:00): 79, pid=..., name" after "NVRM: Xid (" (with or without "PCI:").
bool read_xid(std::string_view rest, XidEvent& event) {
  if (rest.substr(0, 4) == "PCI:") rest.remove_prefix(4);
  const size_t close = rest.find("): ");
  if (close == std::string_view::npos) return false;
  event.bus_id = normal_bus_id(rest.substr(0, close));
  std::string_view tail = rest.substr(close + 3);
  const auto [end, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), event.code);
  if (ec != std::errc() || event.code < 0) return false;
  tail.remove_prefix(static_cast<size_t>(end - tail.data()));
  if (!tail.empty() && tail.front() == ',') tail.remove_prefix(1);
  event.message = shown_text(trim_blanks(tail));
  return true;
}

}  // namespace

std::vector<XidEvent> parse_xid_events(std::string_view log) {
  std::vector<XidEvent> events;
  std::string fallen_bus;  // the GPU of the last "NVRM: The NVIDIA GPU <bus>" line
  for (size_t start = 0; start < log.size();) {
    size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    const std::string_view line = log.substr(start, end - start);
    start = end + 1;
    if (const size_t at = line.find(kXidMark); at != std::string_view::npos) {
      XidEvent event;
      if (read_xid(line.substr(at + kXidMark.size()), event)) events.push_back(std::move(event));
    } else if (const size_t gpu = line.find(kGpuMark); gpu != std::string_view::npos) {
      const std::string_view rest = line.substr(gpu + kGpuMark.size());
      fallen_bus = normal_bus_id(rest.substr(0, rest.find(' ')));
    }
    if (!fallen_bus.empty() && line.find(kFallenOff) != std::string_view::npos &&
        line.find(kXidMark) == std::string_view::npos) {
      events.push_back({fallen_bus, kXidFallenOff, "GPU has fallen off the bus (no Xid line)"});
      fallen_bus.clear();
    }
  }
  return events;
}

std::span<const XidInfo> xid_table() { return kXids; }

const XidInfo* find_xid(int code) {
  const auto it =
      std::find_if(kXids.begin(), kXids.end(), [&](const XidInfo& x) { return x.code == code; });
  return it == kXids.end() ? nullptr : &*it;
}

}  // namespace plumb::check
