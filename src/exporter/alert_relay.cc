#include "exporter/alert_relay.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/url_redact.h"

namespace plumb::exporter {
namespace {

HttpResponse text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string count(size_t n) { return fmt::format("{} alert{}", n, n == 1 ? "" : "s"); }

}  // namespace

HttpResponse handle_alert_webhook(const HttpRequest& request, ChatSender& sender,
                                  const std::function<void(const std::string&)>& log) {
  if (request.path == "/healthz" && (request.method == "GET" || request.method == "HEAD")) {
    return text(200, "ok\n");
  }
  if (request.method != "POST") {
    HttpResponse r = text(405, "plumb alert-relay: POST Alertmanager's webhook payload (version "
                               "4) to any path, e.g. /alertmanager; GET /healthz\n");
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  WebhookPayload payload;
  try {
    payload = parse_alertmanager_webhook(request.body);
  } catch (const Error& e) {
    log(fmt::format("plumb alert-relay: answered 400 to a POST {}: {}", redact_url(request.path),
                    e.what()));
    return text(400, std::string(e.what()) + "\n");
  }
  const size_t alerts = payload.alerts.size();
  if (!sender.enqueue(std::move(payload))) {
    log(fmt::format("plumb alert-relay: queue full: answered 503 to a notification of {} "
                    "(Alertmanager retries it)", count(alerts)));
    return text(503, "plumb alert-relay: queue full; retry later\n");
  }
  return text(200, fmt::format("queued {}\n", count(alerts)));
}

}  // namespace plumb::exporter
