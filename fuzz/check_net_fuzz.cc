// libFuzzer target: any bytes as the output of hccn_tool (-link, -net_health, -pfc, -dscp_to_tc),
// of mlnx_qos -i, and as /proc/interrupts. The readers never throw and never crash; what they
// return stays in range: DSCP 0-63, traffic classes and priorities 0-7, IRQs and counts not negative.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string_view>

#include "check/hccn_tool.h"
#include "check/mlnx_qos.h"
#include "check/proc_interrupts.h"

namespace {

void check_map(const std::map<int, int>& map) {
  for (const auto& [dscp, tc] : map) {
    if (dscp < 0 || dscp > 63 || tc < 0 || tc > 7) std::abort();
  }
}

void check_priorities(const std::optional<std::vector<int>>& priorities) {
  if (!priorities) return;
  for (const int p : *priorities) {
    if (p < 0 || p > 7) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)plumb::check::parse_hccn_link(text);
  (void)plumb::check::parse_hccn_net_health(text);
  (void)plumb::check::output_excerpt(text);
  check_priorities(plumb::check::parse_hccn_pfc(text));
  check_map(plumb::check::parse_hccn_dscp_to_tc(text));
  if (const std::optional<plumb::check::MlnxQos> q = plumb::check::parse_mlnx_qos(text)) {
    check_priorities(q->pfc_priorities);
    check_map(q->dscp_to_prio);
  }
  for (const plumb::check::InterruptLine& line : plumb::check::parse_interrupts(text)) {
    if (line.irq < 0 || line.count < 0) std::abort();
    (void)plumb::check::interrupt_of(line, "0000:3b:00.0", {"ens1f0", "mlx5_0"});
  }
  return 0;
}
