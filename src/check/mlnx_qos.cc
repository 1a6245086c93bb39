#include "check/mlnx_qos.h"

#include "check/probe_text.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

// "prio:3" -> 3
std::optional<long> tagged(std::string_view word, std::string_view tag) {
  if (word.substr(0, tag.size()) != tag) return std::nullopt;
  return to_long(word.substr(tag.size()));
}

// One "prio:N dscp:a,b,c," line into `map` (a line may repeat a priority: mlnx_qos wraps after
// eight values).
void read_dscp_line(std::string_view line, std::map<int, int>& map) {
  const std::vector<std::string_view> w = words(line);
  if (w.size() != 2 || w[1].substr(0, 5) != "dscp:") return;
  const std::optional<long> prio = tagged(w[0], "prio:");
  if (!prio || *prio < 0 || *prio > kMaxPriority) return;
  for (const std::string& item : split_list(w[1].substr(5), ',')) {
    const std::optional<long> dscp = to_long(item);
    if (dscp && *dscp >= 0 && *dscp <= kMaxDscp) map[static_cast<int>(*dscp)] = static_cast<int>(*prio);
  }
}

}  // namespace

std::optional<MlnxQos> parse_mlnx_qos(std::string_view text) {
  MlnxQos qos;
  const std::optional<std::string> trust = keyed_value(text, "Priority trust state");
  if (trust) qos.trust = *trust;
  qos.pfc_priorities = pfc_enabled_priorities(text);
  if (!trust && !qos.pfc_priorities) return std::nullopt;
  for (std::string_view line : lines(text)) read_dscp_line(line, qos.dscp_to_prio);
  return qos;
}

}  // namespace plumb::check
