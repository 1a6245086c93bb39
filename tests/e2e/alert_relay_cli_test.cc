// plumb alert-relay end to end: the binary receives the webhook Alertmanager 0.25 sent (the
// captured fixture) over HTTP, answers at once, and posts to a loopback stand-in for a Feishu bot;
// a bad payload is answered 400 with its message; SIGTERM stops it with exit 0; a bad --to is
// exit 2 with its one message.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "exporter/alertmanager_webhook.h"
#include "exporter/chat_targets.h"
#include "support/fake_chat_endpoint.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;
const std::string kFixture = std::string(PLUMB_TEST_FIXTURES) + "/exporter/alertmanager_0.25_firing.json";
constexpr int kPatienceSeconds = 30;  // "it did not hang" bounds, never timings

// The relay's port, read from its "listening on" line; 0 when it did not start in time.
int wait_for_port(const std::string& log_path) {
  const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)/alertmanager");
  for (int i = 0; i < kPatienceSeconds * 20; ++i) {
    std::smatch m;
    const std::string log = read_file(log_path);
    if (std::regex_search(log, m, listening)) return std::stoi(m[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

// POSTs a file with curl; "STATUS BODY".
std::string post(int port, const std::string& file) {
  const test::Run r = run_command("curl -s -w ' %{http_code}' -H 'Content-Type: application/json' "
                            "--data-binary @" + file + " http://127.0.0.1:" +
                            std::to_string(port) + "/alertmanager");
  const size_t sp = r.out.rfind(' ');
  return r.out.substr(sp + 1) + " " + r.out.substr(0, sp);
}

// The age ("8h 35m ago") depends on the clock when the relay rendered it: everything else is
// compared exactly.
std::string without_age(const std::string& text) {
  return std::regex_replace(text, std::regex("\\([0-9]+[dhms][^)]* ago\\)"), "(AGE ago)");
}

TEST(AlertRelayCli, RelaysAlertmanagerPayloadToFeishu) {
  FakeChatEndpoint feishu({{200, R"({"code":0,"data":{},"msg":"success"})", "", false}});
  const std::string dir = temp_dir("alert-relay");
  test::Run relay;
  std::thread runner([&] {
    relay = run_command("sh -c 'echo $$ > " + dir + "/pid; exec " + kPlumb +
                        " alert-relay --to feishu:" + feishu.url() +
                        " --listen 127.0.0.1:0 --backoff 0.05 2>" + dir + "/log'");
  });
  const int port = wait_for_port(dir + "/log");
  ASSERT_NE(port, 0) << read_file(dir + "/log");

  EXPECT_EQ(post(port, kFixture), "200 queued 2 alerts\n");
  ASSERT_TRUE(feishu.wait_for(1, kPatienceSeconds));
  const FakeRequest got = feishu.requests()[0];
  EXPECT_EQ(got.path, "/open-apis/bot/v2/hook/test-token");
  const exporter::WebhookPayload payload =
      exporter::parse_alertmanager_webhook(read_file(kFixture));
  const std::string expected = exporter::parse_chat_target("feishu:http://x").kind->body(
      payload, exporter::RenderContext{std::chrono::sys_seconds{}, ""});
  EXPECT_EQ(without_age(got.body), without_age(expected));
  const std::string text = nlohmann::json::parse(got.body)["content"]["text"];
  EXPECT_NE(text.find("FIRING PlumbHbmHigh critical host=node-17 device=5\n"
                      "started 2026-12-04 09:13:00 UTC ("),
            std::string::npos) << text;

  write_file(dir + "/bad.json", R"({"version":"4","status":"firing","alerts":[{"status":"firing",)"
                                R"("labels":{"alertname":"A"},"startsAt":"yesterday"}]})");
  EXPECT_EQ(post(port, dir + "/bad.json"),
            "400 Alertmanager webhook payload: alerts[0].startsAt: expected an RFC 3339 time, got "
            "'yesterday'\n");

  ASSERT_EQ(::kill(std::stoi(read_file(dir + "/pid")), SIGTERM), 0);
  runner.join();
  EXPECT_EQ(relay.exit_code, 0);
  const std::string log = read_file(dir + "/log");
  EXPECT_NE(log.find("plumb alert-relay: feishu: delivered 2 alerts: PlumbHbmHigh firing "
                     "host=node-17 device=3, PlumbHbmHigh firing host=node-17 device=5\n"),
            std::string::npos) << log;
  EXPECT_NE(log.find("plumb alert-relay: answered 400 to a POST /alertmanager: Alertmanager "
                     "webhook payload: alerts[0].startsAt: expected an RFC 3339 time, got "
                     "'yesterday'\n"),
            std::string::npos) << log;
  EXPECT_NE(log.find("/open-apis/bot/v2/hook/test***"), std::string::npos) << log;
  EXPECT_EQ(log.find("test-token"), std::string::npos) << log;  // the token is never logged whole
}

TEST(AlertRelayCli, UnknownTargetKindIsBadUsage) {
  const test::Run r = run_command(kPlumb + " alert-relay --to bogus:http://x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --to: unknown target kind 'bogus'; expected one of feishu, "
                   "lark, slack, webhook\n");
  const test::Run url = run_command(kPlumb + " alert-relay --to slack:hooks.slack.com/x");
  EXPECT_EQ(url.exit_code, 2);
  EXPECT_EQ(url.err, "plumb: error: --to slack: expected a URL starting with http:// or https:// "
                     "and a host, got 'hooks.slack.com/x'\n");
}

}  // namespace
}  // namespace plumb::test
