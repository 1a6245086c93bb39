// Posting notifications to the chat targets: one worker thread fed by a bounded queue, so that
// the webhook's HTTP answer to Alertmanager never waits for a chat. Each attempt has a time
// limit; a refusal or no answer is retried with exponential back-off (Retry-After honoured); every
// failed attempt and every delivery is one log line, the target's URL rendered by redact_url and
// the whole line masked of the targets' secrets and the Feishu secret (common/url_redact.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exporter/alertmanager_webhook.h"
#include "exporter/chat_targets.h"

namespace plumb::exporter {

struct SenderOptions {
  int retries = 4;                  // after the first attempt: 5 attempts in all
  double backoff_seconds = 1;       // before the first retry, doubling each time ...
  double backoff_cap_seconds = 60;  // ... up to this
  double timeout_seconds = 10;      // one attempt, connecting included
  std::string feishu_secret;        // signs Feishu/Lark bodies when not empty
  size_t queue_capacity = 256;      // notifications waiting; past that Alertmanager gets 503
};

// A Retry-After longer than this is cut to it: a target cannot stall the relay for hours.
constexpr double kMaxRetryAfterSeconds = 600;

// One POST of a JSON body; `abandon` becoming true aborts it. The real one is curl_post.
using HttpPost = std::function<ChatReply(const std::string& url, const std::string& body,
                                         double timeout_seconds, const std::atomic<bool>& abandon)>;

// libcurl: http:// and https:// only, no redirects followed, no "Expect: 100-continue", the
// reply body kept up to 64 KiB, Retry-After read when it is a number of seconds.
ChatReply curl_post(const std::string& url, const std::string& body, double timeout_seconds,
                    const std::atomic<bool>& abandon);

// Every secret of the relay's settings: each target URL's url_secrets and the Feishu secret, what
// mask_secrets looks for in the relay's log lines.
std::vector<std::string> relay_secrets(const std::vector<ChatTarget>& targets,
                                       const std::string& feishu_secret);

// What tests replace: the POST, where log lines go, the clock.
struct SenderHooks {
  HttpPost post = curl_post;
  std::function<void(const std::string& line)> log;
  std::function<std::chrono::sys_seconds()> now;
};

// The wait before retry `retry` (1 for the first): backoff * 2^(retry-1), capped; at least the
// target's Retry-After (itself capped at kMaxRetryAfterSeconds).
double retry_delay(const SenderOptions& options, int retry, std::optional<double> retry_after);

enum class Delivery { kDelivered, kGaveUp, kAbandoned };

class ChatSender {
 public:
  ChatSender(std::vector<ChatTarget> targets, SenderOptions options, SenderHooks hooks);
  ~ChatSender();  // abandons what is left at once
  ChatSender(const ChatSender&) = delete;
  ChatSender& operator=(const ChatSender&) = delete;

  // Queues one notification for every target; false (nothing queued) when the queue is full or
  // the sender is finishing.
  bool enqueue(WebhookPayload payload);
  // Takes no more work, lets the worker deliver what is queued for up to `drain_seconds`, then
  // abandons the rest (a transfer in flight is aborted, a back-off cut short) and stops the
  // worker. Returns how many notifications were abandoned.
  size_t finish(double drain_seconds);

  struct Counts {
    size_t delivered = 0;  // (notification, target) pairs
    size_t gave_up = 0;
  };
  Counts counts() const;

 private:
  void work();
  Delivery deliver(const ChatTarget& target, const WebhookPayload& payload);
  // Sleeps `seconds` unless abandoned first; false when abandoned.
  bool wait(double seconds);
  void log(const std::string& line) const;

  std::vector<ChatTarget> targets_;
  SenderOptions options_;
  SenderHooks hooks_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<WebhookPayload> queue_;
  bool closing_ = false;
  bool in_flight_ = false;
  std::atomic<bool> abandon_{false};
  Counts counts_;
  std::vector<std::string> secrets_;  // relay_secrets: masked in every line logged
  std::thread worker_;
};

}  // namespace plumb::exporter
