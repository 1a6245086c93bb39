#include "exporter/chat_targets.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

#include "common/error.h"
#include "common/hmac.h"
#include "common/json.h"
#include "common/number_range.h"
#include "common/strings.h"
#include "common/url_redact.h"

namespace plumb::exporter {
namespace {

using ordered = nlohmann::ordered_json;
namespace ch = std::chrono;

// Label values are UTF-8 (the parser checked), but a body must never fail to render: bytes that
// are not UTF-8 become U+FFFD.
std::string dump(const ordered& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string utc(ch::sys_seconds t) {
  std::string s = format_rfc3339(t);  // 2026-12-04T09:12:30Z
  return s.substr(0, 10) + " " + s.substr(11, 8) + " UTC";
}

std::string title_line(const WebhookPayload& p) {
  const auto firing = std::count_if(p.alerts.begin(), p.alerts.end(),
                                    [](const WebhookAlert& a) { return a.status == "firing"; });
  // Alertmanager's own default title: [FIRING:n] and the group's label values, sorted by name.
  std::string title = p.status == "firing" ? fmt::format("[FIRING:{}]", firing) : "[RESOLVED]";
  for (const auto& [name, value] : p.group_labels) title += " " + value;
  return title;
}

std::string when_line(const WebhookAlert& a, ch::sys_seconds now) {
  if (!a.starts_at) return "started: unknown";
  if (a.status == "resolved" && a.ends_at) {
    return fmt::format("started {}, resolved {} (lasted {})", utc(*a.starts_at), utc(*a.ends_at),
                       format_age(*a.ends_at - *a.starts_at));
  }
  return fmt::format("started {} ({} ago)", utc(*a.starts_at), format_age(now - *a.starts_at));
}

std::string alert_block(const WebhookAlert& a, ch::sys_seconds now) {
  std::string head = a.status == "firing" ? "FIRING " : "RESOLVED ";
  head += a.label("alertname");
  if (!a.label("severity").empty()) head += " " + a.label("severity");
  if (!alert_host(a).empty()) head += " host=" + alert_host(a);
  if (!a.label("device").empty()) head += " device=" + a.label("device");
  std::string block = head + "\n" + when_line(a, now);
  if (!a.annotation("summary").empty()) block += "\n" + a.annotation("summary");
  // As written: plumb's alerts say "Check first: ..." themselves, and another rule's
  // description is not always advice.
  if (!a.annotation("description").empty()) block += "\n" + a.annotation("description");
  if (!a.generator_url.empty()) block += "\n" + a.generator_url;
  return block;
}

// --- Feishu / Lark -------------------------------------------------------------------------
// open.feishu.cn "Custom bot guide": {"msg_type":"text","content":{"text":...}}, with
// "timestamp" (seconds, as a string) and "sign" first when the bot verifies signatures. The reply
// is HTTP 200 and {"code":0,"msg":"success",...}; a refusal is a non-zero code, also with HTTP
// 200 (19021 signature, 11232 frequency limit, 19001 param invalid). Older replies carry
// "StatusCode" instead of "code".
std::string feishu_body(const WebhookPayload& p, const RenderContext& c) {
  ordered body = ordered::object();
  if (!c.feishu_secret.empty()) {
    const long long timestamp = c.now.time_since_epoch().count();
    body["timestamp"] = std::to_string(timestamp);
    body["sign"] = feishu_sign(timestamp, c.feishu_secret);
  }
  body["msg_type"] = "text";
  body["content"] = {{"text", alert_text(p, c.now)}};
  return dump(body);
}

std::string http_refusal(const ChatReply& r) {
  if (r.status == 0) return "no answer: " + r.transport_error;
  const std::string body = r.body.substr(0, r.body.find('\n'));
  return body.empty() ? fmt::format("HTTP {}", r.status)
                      : fmt::format("HTTP {} '{}'", r.status, shorten(body));
}

ReplyVerdict feishu_judge(const ChatReply& r) {
  if (r.status != 200) return {false, http_refusal(r)};
  std::string problem;  // any reply that is not Feishu's is shown as it came
  const nlohmann::json reply = parse_json_or_discarded(r.body, problem);
  const char* key = reply.is_object() && reply.contains("code") ? "code" : "StatusCode";
  if (!reply.is_object() || !reply.contains(key) || !reply[key].is_number_integer()) {
    return {false, fmt::format("HTTP 200 but not Feishu's reply: '{}'", shorten(r.body))};
  }
  const long long code = reply[key].get<long long>();
  if (code == 0) return {true, ""};
  const char* msg_key = reply.contains("msg") ? "msg" : "StatusMessage";
  const std::string msg =
      reply.contains(msg_key) && reply[msg_key].is_string() ? reply[msg_key].get<std::string>() : "";
  return {false, fmt::format("HTTP 200 code {} '{}'", code, msg)};
}

// --- Slack ---------------------------------------------------------------------------------
// docs.slack.dev "Sending messages using incoming webhooks": {"text": ...}, where &, < and > are
// escaped as &amp; &lt; &gt; (Slack's "Formatting text"); the reply is HTTP 200 "ok", a refusal a
// status with a one-word body ("invalid_payload", "no_service"), a rate limit 429 with
// Retry-After. Slack-compatible services (Mattermost, Rocket.Chat) answer other 2xx bodies.
std::string slack_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

std::string slack_body(const WebhookPayload& p, const RenderContext& c) {
  return dump(ordered{{"text", slack_escape(alert_text(p, c.now))}});
}

ReplyVerdict status_judge(const ChatReply& r) {
  if (r.status >= 200 && r.status < 300) return {true, ""};
  return {false, http_refusal(r)};
}

// --- generic webhook: plumb.alert/1 --------------------------------------------------------
ordered label_object(const Labels& labels) {
  ordered out = ordered::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

ordered time_value(const AlertTime& t) { return t ? ordered(format_rfc3339(*t)) : ordered(); }

ordered alert_object(const WebhookAlert& a, ch::sys_seconds now) {
  return ordered{{"status", a.status},
                 {"name", a.label("alertname")},
                 {"severity", a.label("severity")},
                 {"host", alert_host(a)},
                 {"device", a.label("device")},
                 {"starts_at", time_value(a.starts_at)},
                 {"ends_at", time_value(a.ends_at)},
                 {"age_seconds", a.starts_at ? ordered((now - *a.starts_at).count()) : ordered()},
                 {"summary", a.annotation("summary")},
                 {"description", a.annotation("description")},
                 {"generator_url", a.generator_url},
                 {"fingerprint", a.fingerprint},
                 {"labels", label_object(a.labels)},
                 {"annotations", label_object(a.annotations)}};
}

std::string webhook_body(const WebhookPayload& p, const RenderContext& c) {
  ordered alerts = ordered::array();
  for (const WebhookAlert& a : p.alerts) alerts.push_back(alert_object(a, c.now));
  return dump(ordered{{"schema", "plumb.alert/1"},
                      {"status", p.status},
                      {"receiver", p.receiver},
                      {"group_key", p.group_key},
                      {"group_labels", label_object(p.group_labels)},
                      {"common_labels", label_object(p.common_labels)},
                      {"external_url", p.external_url},
                      {"truncated_alerts", p.truncated_alerts},
                      {"sent_at", format_rfc3339(c.now)},
                      {"text", alert_text(p, c.now)},
                      {"alerts", alerts}});
}

// A URL in a message: masked (redact_url), then cut where an absurdly long one would flood it.
constexpr size_t kMaxShownUrl = 200;

std::string shown_url(std::string_view url) {
  const std::string shown = redact_url(url);
  return shown.size() <= kMaxShownUrl ? shown : shown.substr(0, kMaxShownUrl - 3) + "...";
}

// A word typed where the kind goes, as an error quotes it: a name (at most kMaxShownKind letters,
// '-' or '_') as written; anything else may be a token pasted there ("2c1e5d3a:...") and is masked.
constexpr size_t kMaxShownKind = 16;

std::string shown_kind(std::string_view kind) {
  const bool a_name =
      kind.size() <= kMaxShownKind && std::all_of(kind.begin(), kind.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) || c == '-' || c == '_';
      });
  return a_name ? std::string(kind) : kMask;
}

std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (const ChatTargetKind& k : chat_target_kinds()) names.push_back(k.name);
  return names;
}

}  // namespace

std::span<const ChatTargetKind> chat_target_kinds() {
  static const std::vector<ChatTargetKind> kTable = {
      {"feishu", "Feishu custom bot (open.feishu.cn/open-apis/bot/v2/hook/...)", feishu_body,
       feishu_judge},
      {"lark", "Lark custom bot (open.larksuite.com/open-apis/bot/v2/hook/...), as feishu",
       feishu_body, feishu_judge},
      {"slack", "Slack incoming webhook or a Slack-compatible one (Mattermost, Rocket.Chat)",
       slack_body, status_judge},
      {"webhook", "Any HTTP endpoint: the alerts as plumb.alert/1 JSON", webhook_body,
       status_judge},
  };
  return kTable;
}

ChatTarget parse_chat_target(std::string_view spec) {
  const std::vector<std::string> names = kind_names();
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    // A kind alone is shown; anything else as a URL is, so that a token pasted alone is masked.
    const bool a_kind = std::find(names.begin(), names.end(), spec) != names.end();
    throw Error(fmt::format("--to '{}': expected KIND:URL with KIND one of {}",
                            a_kind ? std::string(spec) : shown_url(spec),
                            join(names, ", ")));
  }
  const std::string kind(spec.substr(0, colon));
  const std::string url(spec.substr(colon + 1));
  ChatTarget target;
  for (const ChatTargetKind& k : chat_target_kinds()) {
    if (k.name == kind) target.kind = &k;
  }
  if (!target.kind) {
    throw Error(unknown_name("--to", "target kind", shown_kind(kind), names, kind));
  }
  const size_t host = url.starts_with("https://") ? 8 : url.starts_with("http://") ? 7 : 0;
  if (host == 0 || host == url.size() || url[host] == '/') {
    throw Error(fmt::format("--to {}: expected a URL starting with http:// or https:// and a host, "
                            "got '{}'", kind, shown_url(url)));
  }
  target.url = url;
  return target;
}

std::string alert_host(const WebhookAlert& a) {
  const std::string host = a.label("host");
  return host.empty() ? a.label("instance") : host;
}

std::string alert_brief(const WebhookAlert& a) {
  std::string brief = a.label("alertname") + " " + a.status;
  if (!alert_host(a).empty()) brief += " host=" + alert_host(a);
  if (!a.label("device").empty()) brief += " device=" + a.label("device");
  return brief;
}

std::string format_age(ch::seconds age) {
  const long long s = std::max<long long>(0, age.count());
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m {}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h {}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d {}h", s / 86400, s % 86400 / 3600);
}

std::string alert_text(const WebhookPayload& p, ch::sys_seconds now) {
  std::string text = title_line(p);
  for (const WebhookAlert& a : p.alerts) text += "\n\n" + alert_block(a, now);
  if (p.truncated_alerts > 0) {
    text += fmt::format("\n\n... and {} more alerts that Alertmanager left out (max_alerts)",
                        p.truncated_alerts);
  }
  if (!p.external_url.empty()) text += "\n\nAlertmanager: " + p.external_url;
  return text;
}

std::string feishu_sign(long long timestamp, std::string_view secret) {
  const std::string key = std::to_string(timestamp) + "\n" + std::string(secret);
  const Sha256::Digest mac = hmac_sha256(key, "");
  return base64(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

}  // namespace plumb::exporter
