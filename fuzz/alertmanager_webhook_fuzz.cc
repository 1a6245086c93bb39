// libFuzzer target: any bytes as the body of an Alertmanager webhook POST. Parsing must return or
// throw plumb::Error; what it returns renders for every chat target without throwing, every
// alert has a status the relay knows, and the normalised times read back as themselves.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/error.h"
#include "exporter/alertmanager_webhook.h"
#include "exporter/chat_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumb::exporter;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const WebhookPayload payload = parse_alertmanager_webhook(body);
    if (payload.version != "4" || payload.truncated_alerts < 0) std::abort();
    for (const WebhookAlert& alert : payload.alerts) {
      if (alert.status != "firing" && alert.status != "resolved") std::abort();
      if (alert.starts_at) {
        bool ok = false;
        if (parse_rfc3339(format_rfc3339(*alert.starts_at), ok) != alert.starts_at || !ok) {
          std::abort();
        }
      }
    }
    const RenderContext context{std::chrono::sys_seconds(std::chrono::seconds(1796406485)), "s"};
    for (const ChatTargetKind& kind : chat_target_kinds()) {
      if (kind.body(payload, context).empty()) std::abort();
    }
  } catch (const plumb::Error&) {
  }
  return 0;
}
