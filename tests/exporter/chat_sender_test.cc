#include "exporter/chat_sender.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>

#include "support/fake_chat_endpoint.h"
#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

using test::FakeChatEndpoint;
using test::FakeReply;
namespace ch = std::chrono;

constexpr ch::sys_seconds kNow{ch::seconds(1796406485)};
// Generous: "it did not block" bounds, never timings.
constexpr double kPatience = 30;

WebhookPayload firing() {
  return parse_alertmanager_webhook(test::read_file(std::string(PLUMB_TEST_FIXTURES) +
                                                    "/exporter/alertmanager_0.25_firing.json"));
}

// Log lines, kept for the assertions.
struct Log {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::vector<std::string> get() {
    std::lock_guard lock(mutex);
    return lines;
  }
};

SenderHooks hooks(Log& log) {
  SenderHooks h;
  h.log = [&log](const std::string& line) {
    std::lock_guard lock(log.mutex);
    log.lines.push_back(line);
  };
  h.now = [] { return kNow; };
  return h;
}

SenderOptions fast(int retries) {
  SenderOptions o;
  o.retries = retries;
  o.backoff_seconds = 0.01;
  o.backoff_cap_seconds = 0.04;
  o.timeout_seconds = kPatience;
  return o;
}

ChatTarget target(const std::string& kind, const FakeChatEndpoint& endpoint) {
  return parse_chat_target(kind + ":" + endpoint.url());
}

const char* const kFeishuOk = R"({"code":0,"data":{},"msg":"success"})";
const char* const kFeishuLimited = R"({"code":11232,"data":{},"msg":"frequency limited"})";
const char* const kBriefs =
    "2 alerts: PlumbHbmHigh firing host=node-17 device=3, PlumbHbmHigh firing host=node-17 device=5";

TEST(RetryDelay, DoublesCapsAndHonoursRetryAfter) {
  SenderOptions o;
  EXPECT_EQ(retry_delay(o, 1, std::nullopt), 1);
  EXPECT_EQ(retry_delay(o, 2, std::nullopt), 2);
  EXPECT_EQ(retry_delay(o, 3, std::nullopt), 4);
  EXPECT_EQ(retry_delay(o, 7, std::nullopt), 60);  // 64 capped
  EXPECT_EQ(retry_delay(o, 1000, std::nullopt), 60);
  EXPECT_EQ(retry_delay(o, 1, 30.0), 30);  // Slack's 429 Retry-After: wait at least that
  EXPECT_EQ(retry_delay(o, 3, 2.0), 4);    // but never less than the back-off
  EXPECT_EQ(retry_delay(o, 1, 1e6), kMaxRetryAfterSeconds);
}

TEST(ChatSender, DeliversAtOnceTheExactBody) {
  FakeChatEndpoint endpoint({{200, kFeishuOk, "", false}});
  Log log;
  ChatSender sender({target("feishu", endpoint)}, fast(4), hooks(log));
  ASSERT_TRUE(sender.enqueue(firing()));
  EXPECT_EQ(sender.finish(kPatience), 0u);
  ASSERT_EQ(endpoint.requests().size(), 1u);
  const test::FakeRequest r = endpoint.requests()[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/open-apis/bot/v2/hook/test-token");
  EXPECT_NE(r.headers.find("Content-Type: application/json; charset=utf-8"), std::string::npos);
  EXPECT_EQ(r.body, chat_target_kinds()[0].body(firing(), RenderContext{kNow, ""}));
  EXPECT_EQ(log.get(), std::vector<std::string>{"plumb alert-relay: feishu: delivered " +
                                                std::string(kBriefs)});
  EXPECT_EQ(sender.counts().delivered, 1u);
}

TEST(ChatSender, RetriesTwoRefusalsThenDelivers) {
  FakeChatEndpoint endpoint({{200, kFeishuLimited, "", false},
                             {503, "busy", "", false},
                             {200, kFeishuOk, "", false}});
  Log log;
  ChatSender sender({target("feishu", endpoint)}, fast(4), hooks(log));
  ASSERT_TRUE(sender.enqueue(firing()));
  EXPECT_EQ(sender.finish(kPatience), 0u);
  EXPECT_EQ(endpoint.requests().size(), 3u);
  const std::string where =
      "plumb alert-relay: feishu http://127.0.0.1:" + std::to_string(endpoint.port()) +
      "/open-apis/bot/v2/hook/***: refused: ";
  EXPECT_EQ(log.get(), (std::vector<std::string>{
                           where + "HTTP 200 code 11232 'frequency limited' (attempt 1 of 5; "
                                   "next in 0.01 s)",
                           where + "HTTP 503 'busy' (attempt 2 of 5; next in 0.02 s)",
                           "plumb alert-relay: feishu: delivered " + std::string(kBriefs)}));
  EXPECT_EQ(sender.counts().delivered, 1u);
  EXPECT_EQ(sender.counts().gave_up, 0u);
}

TEST(ChatSender, GivesUpAfterAllAttempts) {
  FakeChatEndpoint endpoint({{404, "no_service", "", false}});
  Log log;
  ChatSender sender({target("slack", endpoint)}, fast(2), hooks(log));
  ASSERT_TRUE(sender.enqueue(firing()));
  EXPECT_EQ(sender.finish(kPatience), 0u);
  EXPECT_EQ(endpoint.requests().size(), 3u);
  const std::vector<std::string> lines = log.get();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "plumb alert-relay: slack http://127.0.0.1:" +
                          std::to_string(endpoint.port()) +
                          "/open-apis/bot/v2/hook/***: refused: HTTP 404 'no_service' "
                          "(attempt 3 of 3; giving up on " + std::string(kBriefs) + ")");
  EXPECT_EQ(sender.counts().gave_up, 1u);
}

// Issue 28: the password of the userinfo and a token ending a URL with '/' were logged in clear
// on every attempt, four times per alert. Now the URL is rendered by redact_url, and a reply that
// echoes the path (an HTTP server's "Cannot POST /...") is masked of the secrets too.
TEST(ChatSender, NoLineHoldsAPasswordATokenOrTheFeishuSecret) {
  FakeChatEndpoint endpoint({{404, "Cannot POST /notify/letmein-0123/", "", false}});
  const std::string host = "127.0.0.1:" + std::to_string(endpoint.port());
  Log log;
  SenderOptions o = fast(3);
  o.feishu_secret = "feishu-signing-secret";
  ChatSender sender({parse_chat_target("webhook:http://alice:pa55-word-9@" + host +
                                       "/notify/letmein-0123/")},
                    o, hooks(log));
  ASSERT_TRUE(sender.enqueue(firing()));
  EXPECT_EQ(sender.finish(kPatience), 0u);
  ASSERT_EQ(endpoint.requests().size(), 4u);
  EXPECT_EQ(endpoint.requests()[0].path, "/notify/letmein-0123/");
  const std::string where = "plumb alert-relay: webhook http://alice:***@" + host +
                            "/notify/***/: refused: HTTP 404 'Cannot POST /notify/***/' ";
  EXPECT_EQ(log.get(), (std::vector<std::string>{
                           where + "(attempt 1 of 4; next in 0.01 s)",
                           where + "(attempt 2 of 4; next in 0.02 s)",
                           where + "(attempt 3 of 4; next in 0.04 s)",
                           where + "(attempt 4 of 4; giving up on " + std::string(kBriefs) + ")"}));
  EXPECT_EQ(relay_secrets(std::vector<ChatTarget>{parse_chat_target("slack:https://u:pw@h/a/b")},
                          "feishu-signing-secret"),
            (std::vector<std::string>{"pw", "b", "feishu-signing-secret"}));
}

TEST(ChatSender, HonoursRetryAfter) {
  FakeChatEndpoint endpoint({{429, "rate_limited", "Retry-After: 0.05\r\n", false},
                             {200, "ok", "", false}});
  Log log;
  ChatSender sender({target("slack", endpoint)}, fast(1), hooks(log));
  ASSERT_TRUE(sender.enqueue(firing()));
  EXPECT_EQ(sender.finish(kPatience), 0u);
  ASSERT_EQ(log.get().size(), 2u);
  EXPECT_NE(log.get()[0].find("refused: HTTP 429 'rate_limited' (attempt 1 of 2; next in 0.05 s)"),
            std::string::npos)
      << log.get()[0];
}

TEST(ChatSender, TargetThatDoesNotAnswerTimesOut) {
  FakeChatEndpoint endpoint({{200, "", "", true}});
  Log log;
  SenderOptions o = fast(0);
  o.timeout_seconds = 0.2;
  ChatSender sender({target("webhook", endpoint)}, o, hooks(log));
  ASSERT_TRUE(sender.enqueue(firing()));
  EXPECT_EQ(sender.finish(kPatience), 0u);
  const std::vector<std::string> lines = log.get();
  ASSERT_EQ(lines.size(), 1u);
  const std::string prefix = "plumb alert-relay: webhook http://127.0.0.1:" +
                             std::to_string(endpoint.port()) +
                             "/open-apis/bot/v2/hook/***: no answer: Operation timed out";
  EXPECT_EQ(lines[0].substr(0, prefix.size()), prefix) << lines[0];
  EXPECT_NE(lines[0].find("(attempt 1 of 1; giving up on 2 alerts"), std::string::npos);
}

TEST(ChatSender, ConnectionRefusedIsNoAnswer) {
  int port = 0;
  { FakeChatEndpoint gone({{200, "", "", false}}); port = gone.port(); }
  Log log;
  ChatSender sender({parse_chat_target("webhook:http://127.0.0.1:" + std::to_string(port) + "/x")},
                    fast(0), hooks(log));
  ASSERT_TRUE(sender.enqueue(firing()));
  sender.finish(kPatience);
  ASSERT_EQ(log.get().size(), 1u);
  EXPECT_NE(log.get()[0].find(": no answer: Failed to connect to 127.0.0.1 port"),
            std::string::npos) << log.get()[0];
}

TEST(ChatSender, FullQueueRefusesAndFinishAbandonsInBound) {
  FakeChatEndpoint endpoint({{200, "", "", true}});  // holds the first one forever
  Log log;
  SenderOptions o = fast(0);
  o.queue_capacity = 2;
  ChatSender sender({target("webhook", endpoint)}, o, hooks(log));
  ASSERT_TRUE(sender.enqueue(firing()));
  ASSERT_TRUE(endpoint.wait_for(1, kPatience));  // the worker holds it: the queue is empty again
  EXPECT_TRUE(sender.enqueue(firing()));
  EXPECT_TRUE(sender.enqueue(firing()));
  EXPECT_FALSE(sender.enqueue(firing()));
  const auto start = ch::steady_clock::now();
  EXPECT_EQ(sender.finish(0.05), 3u);  // one in flight, two queued
  EXPECT_LT(ch::steady_clock::now() - start, ch::seconds(static_cast<int>(kPatience)));
  EXPECT_FALSE(sender.enqueue(firing()));  // finishing: takes no more
  EXPECT_EQ(log.get().back(),
            "plumb alert-relay: stopping: 3 notifications not delivered (abandoned after 0.05 s)");
}

TEST(ChatSender, EveryTargetGetsEveryNotification) {
  FakeChatEndpoint feishu({{200, kFeishuOk, "", false}});
  FakeChatEndpoint slack({{200, "ok", "", false}});
  Log log;
  ChatSender sender({target("feishu", feishu), target("slack", slack)}, fast(0), hooks(log));
  ASSERT_TRUE(sender.enqueue(firing()));
  ASSERT_TRUE(sender.enqueue(firing()));
  EXPECT_EQ(sender.finish(kPatience), 0u);
  EXPECT_EQ(feishu.requests().size(), 2u);
  EXPECT_EQ(slack.requests().size(), 2u);
  EXPECT_EQ(slack.requests()[0].body.substr(0, 9), R"({"text":")");
  EXPECT_EQ(sender.counts().delivered, 4u);
}

}  // namespace
}  // namespace plumb::exporter
