// Alertmanager's webhook payload, version 4 (prometheus.io/docs/alerting/latest/configuration/
// #webhook_config): what `plumb alert-relay` receives. Parsed into plain structs with every
// problem named by its field ("alerts[2].startsAt: expected an RFC 3339 time, got 'x'"), all of
// them in one message. Fields Alertmanager may add later (and Grafana's extras) are ignored.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/metrics.h"

namespace plumb::exporter {

// A time as Alertmanager writes it (Go's RFC 3339 with nanoseconds), kept to the second in UTC.
// Go's zero time "0001-01-01T00:00:00Z" (an alert still firing has it as endsAt) is "no time".
using AlertTime = std::optional<std::chrono::sys_seconds>;

struct WebhookAlert {
  std::string status;  // "firing" or "resolved"
  Labels labels;       // sorted by name
  Labels annotations;  // sorted by name
  AlertTime starts_at;
  AlertTime ends_at;
  std::string generator_url;  // the Prometheus expression that fired it
  std::string fingerprint;
  // The value of a label (annotation), or "" when it has none.
  std::string label(std::string_view name) const;
  std::string annotation(std::string_view name) const;
};

struct WebhookPayload {
  std::string version;  // "4"
  std::string group_key;
  int truncated_alerts = 0;  // alerts left out by webhook_config's max_alerts
  std::string status;        // "firing" when one alert of the group fires, else "resolved"
  std::string receiver;
  Labels group_labels;
  Labels common_labels;
  Labels common_annotations;
  std::string external_url;  // the Alertmanager's own address
  std::vector<WebhookAlert> alerts;
};

// Parses the body of a webhook POST. Throws plumb::Error listing every problem, one a line.
WebhookPayload parse_alertmanager_webhook(std::string_view body);

// "2026-12-04T09:12:30.5+02:00" -> the second in UTC; "0001-01-01T00:00:00Z" -> no time;
// anything not RFC 3339 (section 5.6: date, 'T', time, fraction, 'Z' or offset) -> nothing and
// `ok` false.
AlertTime parse_rfc3339(std::string_view text, bool& ok);

// "2026-12-04T07:12:30Z": the normalised form the relay writes.
std::string format_rfc3339(std::chrono::sys_seconds time);

}  // namespace plumb::exporter
