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
  EXPECT_NE(log.find("/open-apis/bot/v2/hook/***"), std::string::npos) << log;
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
                     "and a host, got 'hooks.slack.com/***'\n");
}

// The secrets of issue 28's secrets test: a password in the userinfo, a token that is the last
// segment of a URL ending in '/' (caught by no rule but the last-segment one: no digit, 10
// letters), a query value, a Feishu hook's UUID and the Feishu signing secret from the environment.
const char* const kPassword = "correct-horse";
const char* const kLastSegment = "opensesame";
const char* const kQueryValue = "qvalue-secret";
const char* const kFeishuToken = "2c1e5d3a-8f4b-4c2e-9d1a-0123456789ab";
const char* const kFeishuSecret = "feishu-sign-secret";

void expect_no_secret(const std::string& what, const std::string& text) {
  for (const char* secret : {kPassword, kLastSegment, kQueryValue, kFeishuToken, kFeishuSecret}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << what << " holds " << secret << ":\n" << text;
  }
}

// Issue 28, item 6: every command that takes a URL or a secret — here plumb alert-relay, the only
// one — run through its full path (start, a refusal quoting the path back, a retry, two
// deliveries, a 400, SIGTERM) and its bad-usage and --help paths; no output line holds a secret.
// The relay writes no events or records: standard error is all it says.
TEST(AlertRelayCli, NoOutputHoldsAnySecret) {
  FakeChatEndpoint webhook({{404, std::string("Cannot POST /notify/") + kLastSegment + "/", "", false},
                            {200, "ok", "", false}});
  FakeChatEndpoint feishu({{200, R"({"code":0,"data":{},"msg":"success"})", "", false}});
  const std::string webhook_url = "http://alice:" + std::string(kPassword) + "@127.0.0.1:" +
                                  std::to_string(webhook.port()) + "/notify/" + kLastSegment + "/";
  const std::string feishu_url =
      feishu.url(std::string("/open-apis/bot/v2/hook/") + kFeishuToken + "?sig=" + kQueryValue);
  const std::string dir = temp_dir("alert-relay-secrets");
  test::Run relay;
  std::thread runner([&] {
    relay = run_command("sh -c 'echo $$ > " + dir + "/pid; PLUMB_FEISHU_SECRET=" + kFeishuSecret +
                        " exec " + kPlumb + " alert-relay --to webhook:" + webhook_url +
                        " --to feishu:" + feishu_url +
                        " --listen 127.0.0.1:0 --retries 2 --backoff 0.05 2>" + dir + "/log'");
  });
  const int port = wait_for_port(dir + "/log");
  ASSERT_NE(port, 0) << read_file(dir + "/log");
  EXPECT_EQ(post(port, kFixture), "200 queued 2 alerts\n");
  ASSERT_TRUE(feishu.wait_for(1, kPatienceSeconds));
  const std::string delivered = "plumb alert-relay: feishu: delivered 2 alerts";
  for (int i = 0; i < kPatienceSeconds * 20 && read_file(dir + "/log").find(delivered) ==
                                                    std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  write_file(dir + "/bad.json", R"({"version":"3"})");
  EXPECT_EQ(post(port, dir + "/bad.json").substr(0, 4), "400 ");
  ASSERT_EQ(::kill(std::stoi(read_file(dir + "/pid")), SIGTERM), 0);
  runner.join();
  EXPECT_EQ(relay.exit_code, 0);
  EXPECT_EQ(webhook.requests().size(), 2u);
  EXPECT_EQ(webhook.requests()[0].path, std::string("/notify/") + kLastSegment + "/");
  EXPECT_NE(feishu.requests()[0].body.find("\"sign\":"), std::string::npos);  // it signed

  const std::string wp = std::to_string(webhook.port());
  const std::string fp = std::to_string(feishu.port());
  const std::string alerts = "2 alerts: PlumbHbmHigh firing host=node-17 device=3, PlumbHbmHigh "
                             "firing host=node-17 device=5";
  const std::string log = read_file(dir + "/log");
  const std::vector<std::string> lines = {
      "plumb alert-relay: listening on http://127.0.0.1:" + std::to_string(port) +
          "/alertmanager; relaying to webhook http://alice:***@127.0.0.1:" + wp +
          "/notify/***/, feishu http://127.0.0.1:" + fp +
          "/open-apis/bot/v2/hook/2c1e***?sig=***",
      "plumb alert-relay: webhook http://alice:***@127.0.0.1:" + wp +
          "/notify/***/: refused: HTTP 404 'Cannot POST /notify/***/' (attempt 1 of 3; next in "
          "0.05 s)",
      "plumb alert-relay: webhook: delivered " + alerts,
      "plumb alert-relay: feishu: delivered " + alerts};
  for (const std::string& line : lines) {
    EXPECT_NE(log.find(line + "\n"), std::string::npos) << line << "\nnot in:\n" << log;
  }
  expect_no_secret("the relay's log", log + relay.out + relay.err);

  // Bad usage, each message quoting the value masked; --help with the secret in the environment.
  const std::vector<std::pair<std::string, std::string>> usage = {
      {"--to slack:hooks.slack.com/services/T0/B0/" + std::string(kLastSegment),
       "plumb: error: --to slack: expected a URL starting with http:// or https:// and a host, "
       "got 'hooks.slack.com/services/***/***/***'\n"},
      {"--to " + std::string(kLastSegment),
       "plumb: error: --to '***': expected KIND:URL with KIND one of feishu, lark, slack, "
       "webhook\n"},
      {"--to webhook:ftp://alice:" + std::string(kPassword) + "@h/x?token=" + kQueryValue,
       "plumb: error: --to webhook: expected a URL starting with http:// or https:// and a host, "
       "got 'ftp://alice:***@h/***?token=***'\n"},
      // CLI11 quotes unexpected arguments whole; the relay masks them.
      {"--to webhook:http://h.example/x --feishu-secrt " + std::string(kFeishuSecret),
       "plumb: error: The following arguments were not expected: *** --feishu-secrt; run 'plumb "
       "--help' for usage\n"},
      {"--to webhook:http://h.example/x --feishu-secrt=" + std::string(kFeishuSecret),
       "plumb: error: The following argument was not expected: --feishu-secrt=***; run 'plumb "
       "--help' for usage\n"},
      {"--retries 2 http://alice:" + std::string(kPassword) + "@h.example/hook/" + kLastSegment +
           " --to webhook:http://h.example/x",
       "plumb: error: The following argument was not expected: http://alice:***@h.example/hook/"
       "***; run 'plumb --help' for usage\n"},
  };
  for (const auto& [args, message] : usage) {
    const test::Run r = run_command(kPlumb + " alert-relay " + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, message);
    expect_no_secret(args, r.out + r.err);
  }
  const test::Run help = run_command("PLUMB_FEISHU_SECRET=" + std::string(kFeishuSecret) + " " +
                                     kPlumb + " alert-relay --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--feishu-secret"), std::string::npos) << help.out;
  expect_no_secret("--help", help.out + help.err);
}

}  // namespace
}  // namespace plumb::test
