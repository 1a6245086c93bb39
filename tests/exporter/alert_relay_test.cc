#include "exporter/alert_relay.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>

#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

namespace ch = std::chrono;

struct Recorder {
  std::mutex mutex;
  std::vector<std::string> bodies;
  std::vector<std::string> log;
};

// A sender whose POST records the body and always succeeds: no network in these tests.
std::unique_ptr<ChatSender> sender(Recorder& r, size_t capacity, bool block = false) {
  SenderHooks h;
  h.post = [&r, block](const std::string&, const std::string& body, double,
                       const std::atomic<bool>& abandon) {
    while (block && !abandon) std::this_thread::sleep_for(ch::milliseconds(5));
    std::lock_guard lock(r.mutex);
    r.bodies.push_back(body);
    return ChatReply{200, "ok", std::nullopt, ""};
  };
  h.log = [&r](const std::string& line) {
    std::lock_guard lock(r.mutex);
    r.log.push_back(line);
  };
  h.now = [] { return ch::sys_seconds(ch::seconds(1796406485)); };
  SenderOptions o;
  o.queue_capacity = capacity;
  return std::make_unique<ChatSender>(std::vector<ChatTarget>{parse_chat_target("slack:http://h/x")},
                                      o, h);
}

HttpRequest request(const std::string& method, const std::string& path, const std::string& body) {
  HttpRequest r;
  r.method = method;
  r.target = r.path = path;
  r.body = body;
  return r;
}

std::string payload() {
  return test::read_file(std::string(PLUMB_TEST_FIXTURES) + "/exporter/alertmanager_0.25_firing.json");
}

TEST(AlertWebhookHandler, QueuesAGoodPayload) {
  Recorder r;
  auto s = sender(r, 4);
  const HttpResponse resp =
      handle_alert_webhook(request("POST", "/alertmanager", payload()), *s, [](auto&) {});
  EXPECT_EQ(resp.status, 200);
  EXPECT_EQ(resp.body, "queued 2 alerts\n");
  s->finish(30);
  ASSERT_EQ(r.bodies.size(), 1u);
  EXPECT_EQ(r.bodies[0].substr(0, 42), R"({"text":"[FIRING:2] PlumbHbmHigh node-17\n)");
}

TEST(AlertWebhookHandler, BadPayloadIs400WithTheMessageAndLogged) {
  Recorder r;
  auto s = sender(r, 4);
  std::vector<std::string> log;
  const HttpResponse resp = handle_alert_webhook(
      request("POST", "/alertmanager", R"({"version":"3","status":"firing","alerts":[]})"), *s,
      [&log](const std::string& line) { log.push_back(line); });
  EXPECT_EQ(resp.status, 400);
  const std::string message = "Alertmanager webhook payload: version: expected '4' "
                              "(Alertmanager's webhook payload version 4), got '3'";
  EXPECT_EQ(resp.body, message + "\n");
  EXPECT_EQ(log, std::vector<std::string>{"plumb alert-relay: answered 400 to a POST "
                                          "/alertmanager: " + message});
}

TEST(AlertWebhookHandler, FullQueueIs503) {
  Recorder r;
  auto s = sender(r, 1, /*block=*/true);
  std::vector<std::string> log;
  const auto handle = [&] {
    return handle_alert_webhook(request("POST", "/", payload()), *s,
                                [&log](const std::string& line) { log.push_back(line); });
  };
  // The worker takes one (and blocks in it), the queue holds one more; one of the next must fail.
  int refused = 0;
  for (int i = 0; i < 3; ++i) refused += handle().status == 503 ? 1 : 0;
  EXPECT_GE(refused, 1);
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log[0], "plumb alert-relay: queue full: answered 503 to a notification of 2 alerts "
                    "(Alertmanager retries it)");
  s->finish(0);
}

TEST(AlertWebhookHandler, HealthzAndMethods) {
  Recorder r;
  auto s = sender(r, 4);
  EXPECT_EQ(handle_alert_webhook(request("GET", "/healthz", ""), *s, [](auto&) {}).body, "ok\n");
  const HttpResponse get = handle_alert_webhook(request("GET", "/alertmanager", ""), *s, [](auto&) {});
  EXPECT_EQ(get.status, 405);
  EXPECT_EQ(get.headers, (std::vector<std::pair<std::string, std::string>>{{"Allow", "POST"}}));
}

}  // namespace
}  // namespace plumb::exporter
