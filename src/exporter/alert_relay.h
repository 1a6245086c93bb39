// The webhook side of `plumb alert-relay`: one HTTP request from Alertmanager in, one answer out,
// quickly (the handler runs on the HTTP server's thread). A good payload is queued for the chat
// targets and answered 200; a bad one 400 with what is wrong; a full queue 503, which
// Alertmanager retries. GET /healthz answers "ok".
#pragma once

#include <functional>
#include <string>

#include "exporter/chat_sender.h"
#include "exporter/http_server.h"

namespace plumb::exporter {

HttpResponse handle_alert_webhook(const HttpRequest& request, ChatSender& sender,
                                  const std::function<void(const std::string&)>& log);

}  // namespace plumb::exporter
