// Where `plumb alert-relay` posts: a table of chat targets, one small strategy each (STYLE.md 2).
// A target builds the request body for one Alertmanager notification (a group of alerts) and
// judges the reply, because each chat says "refused" its own way: Feishu/Lark with HTTP 200 and a
// non-zero `code`, Slack with a status and a one-word body, a generic webhook with its status.
// The formats are documented, with their sources, in docs/alert-relay.md.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/alertmanager_webhook.h"

namespace plumb::exporter {

// What rendering needs besides the alerts: the time now (for "12m ago", and Feishu's signature
// timestamp) and Feishu's signing secret ("" when the bot has none).
struct RenderContext {
  std::chrono::sys_seconds now{};
  std::string feishu_secret;
};

// What a target answered; `status` 0 when no HTTP answer came (then `transport_error` says why).
struct ChatReply {
  long status = 0;
  std::string body;
  std::optional<double> retry_after_seconds;  // the Retry-After header, in seconds, if any
  std::string transport_error;
};

struct ReplyVerdict {
  bool delivered = false;
  std::string reason;  // why it was refused: "HTTP 200 code 19021 'sign match fail ...'"
};

struct ChatTargetKind {
  std::string name;     // "feishu", "lark", "slack", "webhook"
  std::string summary;  // one line for --help and the docs
  std::function<std::string(const WebhookPayload&, const RenderContext&)> body;
  std::function<ReplyVerdict(const ChatReply&)> judge;
};

std::span<const ChatTargetKind> chat_target_kinds();

// One --to: the kind (an entry of the table) and the URL to POST to.
struct ChatTarget {
  const ChatTargetKind* kind = nullptr;
  std::string url;
};

// "feishu:https://open.feishu.cn/open-apis/bot/v2/hook/ID" -> the target. Throws plumb::Error
// naming --to: an unknown kind (with "did you mean"), no URL, a URL not http:// or https://; the
// value it quotes is rendered by redact_url (common/url_redact.h), as every URL shown is.
ChatTarget parse_chat_target(std::string_view spec);

// The plain-text message of a notification, shared by every target: a title line, then per alert
// its state, name, severity, host, device, start (UTC and age), summary, description, link.
std::string alert_text(const WebhookPayload& payload, std::chrono::sys_seconds now);

// "PlumbHbmHigh firing host=node-17 device=3": an alert as a log line names it.
std::string alert_brief(const WebhookAlert& alert);

// The host an alert is about: its `host` label, else `instance` (other exporters' alerts).
std::string alert_host(const WebhookAlert& alert);

// "42s", "12m 5s", "3h 7m", "2d 4h": a duration in its two largest units.
std::string format_age(std::chrono::seconds age);

// Feishu's custom bot signature: base64(HMAC-SHA256(key = timestamp + "\n" + secret, message =
// empty)) (open.feishu.cn, "Custom bot guide", signature verification).
std::string feishu_sign(long long timestamp, std::string_view secret);

}  // namespace plumb::exporter
