#include "exporter/chat_targets.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "common/hmac.h"
#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

using namespace std::chrono_literals;
namespace ch = std::chrono;

// 2026-12-04 17:48:05 UTC: 8h 35m after the fixture's alerts started.
constexpr ch::sys_seconds kNow{ch::seconds(1796406485)};

std::string fixture(const std::string& name) {
  return test::read_file(std::string(PLUMB_TEST_FIXTURES) + "/exporter/" + name);
}

WebhookPayload firing() {
  return parse_alertmanager_webhook(fixture("alertmanager_0.25_firing.json"));
}

const ChatTargetKind& kind(const std::string& name) { return *parse_chat_target(name + ":http://h").kind; }

std::string body(const std::string& name, const WebhookPayload& p, const std::string& secret = "") {
  return kind(name).body(p, RenderContext{kNow, secret});
}

const char* const kFiringText =
    "[FIRING:2] PlumbHbmHigh node-17\n"
    "\n"
    "FIRING PlumbHbmHigh warning host=node-17 device=3\n"
    "started 2026-12-04 09:12:30 UTC (8h 35m ago)\n"
    "HBM of NPU 3 on node-17 is 96% full\n"
    "Check the job on NPU 3 for a memory leak: plumb mem on its allocator "
    "trace.\n"
    "http://prometheus.example:9090/graph?g0.expr=plumb_device_hbm_used_ratio+%3E+0.95&g0.tab=1\n"
    "\n"
    "FIRING PlumbHbmHigh critical host=node-17 device=5\n"
    "started 2026-12-04 09:13:00 UTC (8h 35m ago)\n"
    "HBM of NPU 5 on node-17 is 99% full\n"
    "Check the job on NPU 5 for a memory leak: plumb mem on its allocator "
    "trace.\n"
    "http://prometheus.example:9090/graph?g0.expr=plumb_device_hbm_used_ratio+%3E+0.95&g0.tab=1\n"
    "\n"
    "Alertmanager: http://alertmanager.example:9093";

TEST(AlertText, FiringGroupWithDeviceHostAndStart) {
  EXPECT_EQ(alert_text(firing(), kNow), kFiringText);
}

TEST(AlertText, ResolvedAlertSaysHowLongItLasted) {
  const WebhookPayload p =
      parse_alertmanager_webhook(fixture("alertmanager_0.25_resolved_and_firing.json"));
  const std::string text = alert_text(p, kNow);
  EXPECT_EQ(text.substr(0, text.find("\n\nFIRING")),
            "[FIRING:1] PlumbHbmHigh node-17\n"
            "\n"
            "RESOLVED PlumbHbmHigh warning host=node-17 device=3\n"
            "started 2026-12-04 09:12:30 UTC, resolved 2026-12-04 09:20:00 UTC (lasted 7m 30s)\n"
            "HBM of NPU 3 on node-17 is 96% full\n"
            "Check the job on NPU 3 for a memory leak: plumb mem on its "
            "allocator trace.\n"
            "http://prometheus.example:9090/graph?g0.expr=plumb_device_hbm_used_ratio+%3E+0.95"
            "&g0.tab=1");
}

TEST(AlertText, OtherExportersAlertUsesInstanceAndTruncation) {
  WebhookPayload p = parse_alertmanager_webhook(fixture("alertmanager_webhook_types_sample_v4.json"));
  p.truncated_alerts = 3;
  p.status = "resolved";
  p.alerts[0].starts_at.reset();
  EXPECT_EQ(alert_text(p, kNow),
            "[RESOLVED] ProbeFailure\n"
            "\n"
            "FIRING ProbeFailure critical host=https://server.example.org\n"
            "started: unknown\n"
            "BlackBox Probe Failure: https://server.example.org\n"
            "Instance https://server.example.org has been down for over 5m. "
            "Job: http_checks\n"
            "http://prometheus.example.org:9090/graph?g0.expr=probe_success+%3D%3D+0\\u0026g0.tab=1\n"
            "\n"
            "... and 3 more alerts that Alertmanager left out (max_alerts)\n"
            "\n"
            "Alertmanager: http://prometheus.example.org:9093");
}

TEST(AlertText, AgesInTwoUnits) {
  EXPECT_EQ(format_age(42s), "42s");
  EXPECT_EQ(format_age(12min + 5s), "12m 5s");
  EXPECT_EQ(format_age(3h + 7min + 59s), "3h 7m");
  EXPECT_EQ(format_age(ch::days(2) + 4h + 1s), "2d 4h");
  EXPECT_EQ(format_age(-5s), "0s");  // a clock behind Prometheus's: never a negative age
  EXPECT_EQ(alert_brief(firing().alerts[0]), "PlumbHbmHigh firing host=node-17 device=3");
}

TEST(ChatTargetBodies, FeishuText) {
  nlohmann::ordered_json expected = {{"msg_type", "text"}, {"content", {{"text", kFiringText}}}};
  EXPECT_EQ(body("feishu", firing()), expected.dump(-1, ' ', false));
  EXPECT_EQ(body("lark", firing()), expected.dump(-1, ' ', false));
}

TEST(ChatTargetBodies, FeishuSignedPutsTimestampAndSignFirst) {
  const std::string signed_body = body("feishu", firing(), "SEC");
  const std::string prefix =
      R"({"timestamp":"1796406485","sign":"AV78IuSKAyoQuNKjMP65a0kJHs+AdVqq2Enec2pXn5U=",)"
      R"("msg_type":"text","content":{"text":"[FIRING)";
  EXPECT_EQ(signed_body.substr(0, prefix.size()), prefix);
}

TEST(ChatTargetBodies, SlackEscapesAmpersandAndAngles) {
  WebhookPayload p = firing();
  p.alerts.resize(1);
  p.alerts[0].annotations = {{"summary", "a <b> & c"}};
  p.alerts[0].generator_url.clear();
  p.external_url.clear();
  EXPECT_EQ(body("slack", p),
            R"({"text":"[FIRING:1] PlumbHbmHigh node-17\n\nFIRING PlumbHbmHigh warning )"
            R"(host=node-17 device=3\nstarted 2026-12-04 09:12:30 UTC (8h 35m ago)\n)"
            R"(a &lt;b&gt; &amp; c"})");
}

TEST(ChatTargetBodies, GenericWebhookIsPlumbAlert1) {
  EXPECT_EQ(body("webhook", firing()) + "\n", fixture("golden_webhook_plumb_alert_1.json"));
}

TEST(FeishuSign, MatchesThePublishedAlgorithm) {
  // Python: base64(hmac.new(b"1599360473\nsecret-abc", b"", sha256).digest())
  EXPECT_EQ(feishu_sign(1599360473, "secret-abc"), "bXFFfwiTC99s1hsjv1g7FqtMp9Xq5I6UrChC4iH756o=");
}

TEST(Hmac, Rfc4231Vectors) {
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than a block is hashed first.
  EXPECT_EQ(to_hex(hmac_sha256(std::string(131, '\xaa'),
                               "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
}

ReplyVerdict judge(const std::string& name, long status, const std::string& reply_body) {
  return kind(name).judge(ChatReply{status, reply_body, std::nullopt, ""});
}

TEST(ChatTargetReplies, FeishuCodeDecidesEvenWithHttp200) {
  EXPECT_TRUE(judge("feishu", 200, R"({"code":0,"data":{},"msg":"success"})").delivered);
  EXPECT_TRUE(judge("feishu", 200, R"({"StatusCode":0,"StatusMessage":"success"})").delivered);
  const ReplyVerdict sign = judge(
      "feishu", 200,
      R"({"code":19021,"data":{},"msg":"sign match fail or timestamp is not within one hour from current time"})");
  EXPECT_FALSE(sign.delivered);
  EXPECT_EQ(sign.reason, "HTTP 200 code 19021 'sign match fail or timestamp is not within one "
                         "hour from current time'");
  EXPECT_EQ(judge("lark", 200, R"({"code":11232,"msg":"frequency limited psm[lark.oapi.app_platform_runtime]"})").reason,
            "HTTP 200 code 11232 'frequency limited psm[lark.oapi.app_platform_runtime]'");
  EXPECT_EQ(judge("feishu", 200, "<html>proxy</html>").reason,
            "HTTP 200 but not Feishu's reply: '<html>proxy</html>'");
  EXPECT_EQ(judge("feishu", 502, "Bad Gateway\nmore").reason, "HTTP 502 'Bad Gateway'");
}

TEST(ChatTargetReplies, SlackAndWebhookByStatus) {
  EXPECT_TRUE(judge("slack", 200, "ok").delivered);
  EXPECT_EQ(judge("slack", 429, "rate_limited").reason, "HTTP 429 'rate_limited'");
  EXPECT_EQ(judge("slack", 404, "no_service").reason, "HTTP 404 'no_service'");
  EXPECT_TRUE(judge("webhook", 204, "").delivered);
  EXPECT_EQ(judge("webhook", 503, "").reason, "HTTP 503");
  EXPECT_EQ(kind("webhook").judge(ChatReply{0, "", std::nullopt, "Connection refused"}).reason,
            "no answer: Connection refused");
}

TEST(ChatTargetSpec, KindAndUrl) {
  const ChatTarget t = parse_chat_target("feishu:https://open.feishu.cn/open-apis/bot/v2/hook/x");
  EXPECT_EQ(t.kind->name, "feishu");
  EXPECT_EQ(t.url, "https://open.feishu.cn/open-apis/bot/v2/hook/x");
  EXPECT_EQ(parse_chat_target("webhook:http://127.0.0.1:8080/a").url, "http://127.0.0.1:8080/a");
}

TEST(ChatTargetSpec, Errors) {
  const auto error = [](const std::string& spec) {
    return test::error_message([&] { parse_chat_target(spec); });
  };
  EXPECT_EQ(error("bogus:http://x"),
            "--to: unknown target kind 'bogus'; expected one of feishu, lark, slack, webhook");
  EXPECT_EQ(error("slak:http://x"), "--to: unknown target kind 'slak' (did you mean 'slack'?); "
                                    "expected one of feishu, lark, slack, webhook");
  EXPECT_EQ(error("https://x"), "--to: unknown target kind 'https'; expected one of feishu, "
                                "lark, slack, webhook");
  EXPECT_EQ(error("feishu"),
            "--to 'feishu': expected KIND:URL with KIND one of feishu, lark, slack, webhook");
  EXPECT_EQ(error("feishu:ftp://x"), "--to feishu: expected a URL starting with http:// or "
                                     "https:// and a host, got 'ftp://x'");
  EXPECT_EQ(error("slack:https://"), "--to slack: expected a URL starting with http:// or "
                                     "https:// and a host, got 'https://'");
}

// Issue 28: the value an error quotes is rendered by redact_url, so a mistyped --to never shows
// its password or token.
TEST(ChatTargetSpec, ErrorsQuoteTheValueMasked) {
  const auto error = [](const std::string& spec) {
    return test::error_message([&] { parse_chat_target(spec); });
  };
  EXPECT_EQ(error("webhook:ftp://user:pa55word@host/hook/letmein"),
            "--to webhook: expected a URL starting with http:// or https:// and a host, got "
            "'ftp://user:***@host/hook/***'");
  EXPECT_EQ(error("slack:hooks.slack.com/services/T0/B0/letmein"),
            "--to slack: expected a URL starting with http:// or https:// and a host, got "
            "'hooks.slack.com/services/***/***/***'");
  EXPECT_EQ(error(":https://h.example/hook/letmein"),
            "--to ':https://h.example/hook/***': expected KIND:URL with KIND one of feishu, lark, "
            "slack, webhook");
  EXPECT_EQ(error("letmein0123"),
            "--to '***': expected KIND:URL with KIND one of feishu, lark, slack, webhook");
  // A token typed where the kind goes (digits, or past 16 characters) is masked too; a word stays.
  EXPECT_EQ(error("2c1e5d3a-8f4b:https://h.example/x"),
            "--to: unknown target kind '***'; expected one of feishu, lark, slack, webhook");
  EXPECT_EQ(error("feishu1:https://h.example/x"),
            "--to: unknown target kind '***' (did you mean 'feishu'?); expected one of feishu, "
            "lark, slack, webhook");
  EXPECT_EQ(error("abcdefghijklmnopq:https://h.example/x"),
            "--to: unknown target kind '***'; expected one of feishu, lark, slack, webhook");
  EXPECT_EQ(error("web-hook:https://h.example/x"),
            "--to: unknown target kind 'web-hook' (did you mean 'webhook'?); expected one of "
            "feishu, lark, slack, webhook");
}

}  // namespace
}  // namespace plumb::exporter
