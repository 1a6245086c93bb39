#include "exporter/chat_sender.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>

#include "common/number_range.h"
#include "common/url_redact.h"
#include "exporter/curl_library.h"

namespace plumb::exporter {
namespace {

// A reply is judged by its status and first line; a target that streams more is cut short.
constexpr size_t kMaxReplyBytes = 64 * 1024;
// A log line names at most this many alerts, then "and N more".
constexpr size_t kMaxAlertsNamed = 5;

struct Transfer {
  std::string body;
  std::optional<double> retry_after;
  const std::atomic<bool>* abandon = nullptr;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  t->body.append(data, std::min(n, kMaxReplyBytes - std::min(kMaxReplyBytes, t->body.size())));
  return n;
}

// "Retry-After: 120" (RFC 9110 10.2.3's delay-seconds form; an HTTP-date is not used).
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size() &&
      std::equal(kName.begin(), kName.end(), line.begin(),
                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    std::string value(line.substr(kName.size()));
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t\r\n") + 1);
    std::string problem;
    t->retry_after = parse_number(value, NumberRange{0, 1e9}, problem);
  }
  return size * count;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transfer*>(user)->abandon->load() ? 1 : 0;  // non-zero aborts
}

using Easy = std::unique_ptr<CURL, void (*)(CURL*)>;
using Headers = std::unique_ptr<curl_slist, void (*)(curl_slist*)>;

void set_options(CURL* h, const std::string& url, const std::string& body, double timeout,
                 Transfer& t, curl_slist* headers, char* error) {
  const auto curl_easy_setopt = curl_api().easy_setopt;
  const long ms = std::max(1L, std::lround(timeout * 1000));
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // a worker thread: no SIGALRM for DNS timeouts
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_USERAGENT, "plumb-alert-relay/" PLUMB_VERSION);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
}

std::string alerts_named(const WebhookPayload& p) {
  std::string out = fmt::format("{} alert{}", p.alerts.size(), p.alerts.size() == 1 ? "" : "s");
  for (size_t i = 0; i < p.alerts.size() && i < kMaxAlertsNamed; ++i) {
    out += (i ? ", " : ": ") + alert_brief(p.alerts[i]);
  }
  if (p.alerts.size() > kMaxAlertsNamed) {
    out += fmt::format(" and {} more", p.alerts.size() - kMaxAlertsNamed);
  }
  return out;
}

}  // namespace

ChatReply curl_post(const std::string& url, const std::string& body, double timeout_seconds,
                    const std::atomic<bool>& abandon) {
  ChatReply reply;
  const CurlApi& curl = curl_api();
  Easy h(curl.easy_init(), curl.easy_cleanup);
  curl_slist* list = curl.slist_append(nullptr, "Content-Type: application/json; charset=utf-8");
  list = curl.slist_append(list, "Expect:");  // no 1 s wait for a "100 Continue" first
  Headers headers(list, curl.slist_free_all);
  if (!h || !headers) {
    reply.transport_error = "libcurl could not start a transfer";
    return reply;
  }
  Transfer t;
  t.abandon = &abandon;
  char error[CURL_ERROR_SIZE] = {};
  set_options(h.get(), url, body, timeout_seconds, t, headers.get(), error);
  const CURLcode rc = curl.easy_perform(h.get());
  if (rc != CURLE_OK) {
    reply.transport_error = error[0] ? error : curl.easy_strerror(rc);
    return reply;
  }
  curl.easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &reply.status);
  reply.body = std::move(t.body);
  reply.retry_after_seconds = t.retry_after;
  return reply;
}

double retry_delay(const SenderOptions& o, int retry, std::optional<double> retry_after) {
  const double doubled = o.backoff_seconds * std::pow(2.0, std::min(retry - 1, 60));
  const double delay = std::min(doubled, o.backoff_cap_seconds);
  if (!retry_after) return delay;
  return std::max(delay, std::min(*retry_after, kMaxRetryAfterSeconds));
}

std::vector<std::string> relay_secrets(const std::vector<ChatTarget>& targets,
                                       const std::string& feishu_secret) {
  std::vector<std::string> secrets;
  for (const ChatTarget& t : targets) {
    for (std::string& s : url_secrets(t.url)) secrets.push_back(std::move(s));
  }
  if (!feishu_secret.empty()) secrets.push_back(feishu_secret);
  return secrets;
}

ChatSender::ChatSender(std::vector<ChatTarget> targets, SenderOptions options, SenderHooks hooks)
    : targets_(std::move(targets)),
      options_(std::move(options)),
      hooks_(std::move(hooks)),
      secrets_(relay_secrets(targets_, options_.feishu_secret)) {
  curl_api().global_init(CURL_GLOBAL_DEFAULT);  // before any thread: it is not thread-safe
  worker_ = std::thread([this] { work(); });
}

ChatSender::~ChatSender() {
  finish(0);
  curl_api().global_cleanup();
}

bool ChatSender::enqueue(WebhookPayload payload) {
  std::lock_guard lock(mutex_);
  if (closing_ || queue_.size() >= options_.queue_capacity) return false;
  queue_.push_back(std::move(payload));
  changed_.notify_all();
  return true;
}

size_t ChatSender::finish(double drain_seconds) {
  size_t abandoned = 0;
  {
    std::unique_lock lock(mutex_);
    closing_ = true;
    changed_.notify_all();
    const auto drained = [&] { return queue_.empty() && !in_flight_; };
    if (!changed_.wait_for(lock, std::chrono::duration<double>(drain_seconds), drained)) {
      abandoned = queue_.size() + (in_flight_ ? 1 : 0);
      abandon_ = true;
      changed_.notify_all();
    }
  }
  if (worker_.joinable()) worker_.join();
  if (abandoned > 0) {
    log(fmt::format("plumb alert-relay: stopping: {} notification{} not delivered (abandoned "
                    "after {:g} s)", abandoned, abandoned == 1 ? "" : "s", drain_seconds));
  }
  return abandoned;
}

ChatSender::Counts ChatSender::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

void ChatSender::work() {
  for (;;) {
    WebhookPayload payload;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !queue_.empty() || closing_ || abandon_; });
      if (abandon_ || queue_.empty()) return;
      payload = std::move(queue_.front());
      queue_.pop_front();
      in_flight_ = true;
    }
    for (const ChatTarget& target : targets_) {
      const Delivery d = deliver(target, payload);
      std::lock_guard lock(mutex_);
      if (d == Delivery::kDelivered) ++counts_.delivered;
      if (d == Delivery::kGaveUp) ++counts_.gave_up;
      if (d == Delivery::kAbandoned) break;
    }
    std::lock_guard lock(mutex_);
    in_flight_ = false;
    changed_.notify_all();
  }
}

Delivery ChatSender::deliver(const ChatTarget& target, const WebhookPayload& payload) {
  const int attempts = options_.retries + 1;
  const std::string where = target.kind->name + " " + redact_url(target.url);
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    // Built per attempt: the age in the text and Feishu's signed timestamp stay current.
    const std::string body =
        target.kind->body(payload, RenderContext{hooks_.now(), options_.feishu_secret});
    ChatReply reply = hooks_.post(target.url, body, options_.timeout_seconds, abandon_);
    if (abandon_) return Delivery::kAbandoned;
    // The reason quotes the reply, shortened: its secrets are masked before they can be cut.
    reply.body = mask_secrets(reply.body, secrets_);
    reply.transport_error = mask_secrets(reply.transport_error, secrets_);
    const ReplyVerdict verdict = target.kind->judge(reply);
    if (verdict.delivered) {
      log(fmt::format("plumb alert-relay: {}: delivered {}", target.kind->name,
                      alerts_named(payload)));
      return Delivery::kDelivered;
    }
    const std::string what = (reply.status != 0 ? "refused: " : "") + verdict.reason;
    if (attempt == attempts) {
      log(fmt::format("plumb alert-relay: {}: {} (attempt {} of {}; giving up on {})", where, what,
                      attempt, attempts, alerts_named(payload)));
      return Delivery::kGaveUp;
    }
    const double delay = retry_delay(options_, attempt, reply.retry_after_seconds);
    log(fmt::format("plumb alert-relay: {}: {} (attempt {} of {}; next in {:g} s)", where, what,
                    attempt, attempts, delay));
    if (!wait(delay)) return Delivery::kAbandoned;
  }
  return Delivery::kGaveUp;
}

bool ChatSender::wait(double seconds) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return abandon_.load(); });
  return !abandon_;
}

// A refusal quotes the target's reply, and a server may echo the request's path in it ("Cannot
// POST /hook/<token>"): the line is masked of every secret the sender holds.
void ChatSender::log(const std::string& line) const {
  if (hooks_.log) hooks_.log(mask_secrets(line, secrets_));
}

}  // namespace plumb::exporter
