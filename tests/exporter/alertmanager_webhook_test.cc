#include "exporter/alertmanager_webhook.h"

#include <gtest/gtest.h>

#include <string>

#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

using std::chrono::sys_days;
using namespace std::chrono_literals;
namespace ch = std::chrono;

std::string fixture(const std::string& name) {
  return test::read_file(std::string(PLUMB_TEST_FIXTURES) + "/exporter/" + name);
}

std::string parse_error(const std::string& body) {
  return test::error_message([&] { parse_alertmanager_webhook(body); });
}

// A minimal valid payload with `alert` as its only alert.
std::string with_alert(const std::string& alert) {
  return R"({"version":"4","status":"firing","receiver":"r","alerts":[)" + alert + "]}";
}

TEST(AlertmanagerWebhook, ReadsAlertmanager025Payload) {
  const WebhookPayload p = parse_alertmanager_webhook(fixture("alertmanager_0.25_firing.json"));
  EXPECT_EQ(p.version, "4");
  EXPECT_EQ(p.status, "firing");
  EXPECT_EQ(p.receiver, "relay");
  EXPECT_EQ(p.group_key, R"({}:{alertname="PlumbHbmHigh", host="node-17"})");
  EXPECT_EQ(p.truncated_alerts, 0);
  EXPECT_EQ(p.external_url, "http://alertmanager.example:9093");
  EXPECT_EQ(p.group_labels, (Labels{{"alertname", "PlumbHbmHigh"}, {"host", "node-17"}}));
  EXPECT_EQ(p.common_labels,
            (Labels{{"alertname", "PlumbHbmHigh"}, {"host", "node-17"}, {"job", "plumb"}}));
  EXPECT_TRUE(p.common_annotations.empty());
  ASSERT_EQ(p.alerts.size(), 2u);
  const WebhookAlert& a = p.alerts[1];
  EXPECT_EQ(a.status, "firing");
  EXPECT_EQ(a.label("alertname"), "PlumbHbmHigh");
  EXPECT_EQ(a.label("device"), "5");
  EXPECT_EQ(a.label("severity"), "critical");
  EXPECT_EQ(a.label("nothing"), "");
  EXPECT_EQ(a.annotation("summary"), "HBM of NPU 5 on node-17 is 99% full");
  EXPECT_EQ(a.starts_at, sys_days(ch::year(2026) / 12 / 4) + 9h + 13min);
  EXPECT_EQ(a.ends_at, std::nullopt);  // Go's zero time: still firing
  EXPECT_EQ(a.generator_url,
            "http://prometheus.example:9090/graph?g0.expr=plumb_device_hbm_used_ratio+%3E+0.95"
            "&g0.tab=1");
  EXPECT_EQ(a.fingerprint, "d99fac3c2a9cf2be");
}

TEST(AlertmanagerWebhook, ReadsResolvedAlertWithItsEnd) {
  const WebhookPayload p =
      parse_alertmanager_webhook(fixture("alertmanager_0.25_resolved_and_firing.json"));
  ASSERT_EQ(p.alerts.size(), 2u);
  EXPECT_EQ(p.alerts[0].status, "resolved");
  EXPECT_EQ(p.alerts[0].ends_at, sys_days(ch::year(2026) / 12 / 4) + 9h + 20min);
  EXPECT_EQ(p.alerts[1].status, "firing");
}

TEST(AlertmanagerWebhook, ReadsPublishedSampleWithFraction) {
  const WebhookPayload p =
      parse_alertmanager_webhook(fixture("alertmanager_webhook_types_sample_v4.json"));
  ASSERT_EQ(p.alerts.size(), 1u);
  EXPECT_EQ(p.alerts[0].starts_at, sys_days(ch::year(2023) / 2 / 6) + 13h + 8min + 45s);
  EXPECT_EQ(p.alerts[0].label("instance"), "https://server.example.org");
  EXPECT_EQ(p.common_annotations.size(), 2u);
}

TEST(Rfc3339, OffsetsFractionsAndZeroTime) {
  bool ok = false;
  // Go writes nanoseconds and the local offset (the Alertmanager docs' own example).
  EXPECT_EQ(parse_rfc3339("2018-08-03T09:52:26.739266876+02:00", ok),
            sys_days(ch::year(2018) / 8 / 3) + 7h + 52min + 26s);
  EXPECT_TRUE(ok);
  EXPECT_EQ(parse_rfc3339("2018-08-03t01:00:00-05:30", ok),
            sys_days(ch::year(2018) / 8 / 3) + 6h + 30min);
  EXPECT_TRUE(ok);
  EXPECT_EQ(parse_rfc3339("0001-01-01T00:00:00Z", ok), std::nullopt);
  EXPECT_TRUE(ok);
  EXPECT_EQ(parse_rfc3339("0001-01-01T02:00:00+02:00", ok), std::nullopt);  // the same instant
  EXPECT_TRUE(ok);
  for (const char* bad : {"x", "2018-08-03", "2018-08-03T09:52:26", "2018-02-30T00:00:00Z",
                          "2018-08-03T24:00:00Z", "2018-08-03T09:52:26.Z", "2018-08-03T09:52:26+2",
                          "2018-08-03 09:52:26Z", "2018-08-03T09:52:26Zjunk", "+018-08-03T09:52:26Z",
                          "0000-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00"}) {
    parse_rfc3339(bad, ok);
    EXPECT_FALSE(ok) << bad;
  }
}

TEST(Rfc3339, FormatsUtc) {
  EXPECT_EQ(format_rfc3339(sys_days(ch::year(2026) / 12 / 4) + 9h + 13min + 5s),
            "2026-12-04T09:13:05Z");
}

TEST(AlertmanagerWebhookErrors, NotJsonOrNotObject) {
  EXPECT_EQ(parse_error("{"), "Alertmanager webhook payload: not valid JSON: parse error at line 1, "
                              "column 2: syntax error while parsing object key - unexpected end of "
                              "input; expected string literal");
  // 100,000 levels once crashed the relay (issue 28): refused before the parse.
  EXPECT_EQ(parse_error(std::string(100000, '[') + std::string(100000, ']')),
            "Alertmanager webhook payload: JSON nested deeper than 512 levels (at byte 512)");
  EXPECT_EQ(parse_error("[1]"), "Alertmanager webhook payload: expected a JSON object, got [1]");
}

TEST(AlertmanagerWebhookErrors, VersionOtherThan4) {
  EXPECT_EQ(parse_error(R"({"version":"3","status":"firing","alerts":[]})"),
            "Alertmanager webhook payload: version: expected '4' (Alertmanager's webhook payload "
            "version 4), got '3'");
  EXPECT_EQ(parse_error(R"({"version":4,"status":"firing","alerts":[]})"),
            "Alertmanager webhook payload: version: expected a string, got 4");
}

TEST(AlertmanagerWebhookErrors, TopLevelFieldsAllAtOnce) {
  EXPECT_EQ(parse_error(R"({"status":"burning","groupLabels":[],"truncatedAlerts":-1})"),
            "Alertmanager webhook payload: version: missing\n"
            "truncatedAlerts: expected a whole number from 0, got -1\n"
            "status: expected 'firing' or 'resolved', got 'burning'\n"
            "groupLabels: expected an object of strings, got []\n"
            "alerts: missing");
  EXPECT_EQ(parse_error(R"({"version":"4","status":"firing","alerts":{}})"),
            "Alertmanager webhook payload: alerts: expected an array, got {}");
}

TEST(AlertmanagerWebhookErrors, AlertFieldsNamedByIndex) {
  const std::string good =
      R"({"status":"firing","labels":{"alertname":"A"},"startsAt":"2026-12-04T09:12:30Z"})";
  EXPECT_EQ(parse_error(R"({"version":"4","status":"firing","alerts":[)" + good + "," + good +
                        R"(,{"status":"firing","labels":{"alertname":"A"},"startsAt":"x"}]})"),
            "Alertmanager webhook payload: alerts[2].startsAt: expected an RFC 3339 time, got 'x'");
  EXPECT_EQ(parse_error(with_alert(R"({"labels":{"device":3},"annotations":"a","endsAt":7,
                                       "generatorURL":1})")),
            "Alertmanager webhook payload: alerts[0].status: missing\n"
            "alerts[0].labels.device: expected a string, got 3\n"
            "alerts[0].annotations: expected an object of strings, got 'a'\n"
            "alerts[0].startsAt: missing\n"
            "alerts[0].endsAt: expected a string, got 7\n"
            "alerts[0].generatorURL: expected a string, got 1");
  EXPECT_EQ(parse_error(with_alert("5")),
            "Alertmanager webhook payload: alerts[0]: expected an object, got 5");
}

TEST(AlertmanagerWebhookErrors, ManyProblemsAreCounted) {
  std::string alerts;
  for (int i = 0; i < 25; ++i) alerts += std::string(i ? "," : "") + "1";
  const std::string message = parse_error(R"({"version":"4","status":"firing","alerts":[)" +
                                          alerts + "]}");
  EXPECT_NE(message.find("alerts[19]: expected an object, got 1\n... and 5 more"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace plumb::exporter
