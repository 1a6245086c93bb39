#include "cli/alert_relay_command.h"

#include <signal.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>

#include "cli/stop_signal.h"
#include "common/strings.h"
#include "exporter/alert_relay.h"
#include "exporter/chat_sender.h"
#include "exporter/http_server.h"

namespace plumb::cli {
namespace {

// One line at a time from the HTTP and worker threads; label values from Alertmanager are
// escaped so that no byte of theirs drives the terminal.
std::function<void(const std::string&)> stderr_log() {
  auto mutex = std::make_shared<std::mutex>();
  return [mutex](const std::string& line) {
    std::lock_guard lock(*mutex);
    fmt::print(stderr, "{}\n", terminal_safe(line, true));
    std::fflush(stderr);
  };
}

exporter::SenderOptions sender_options(const AlertRelayOptions& o) {
  exporter::SenderOptions s;
  s.retries = o.retries;
  s.backoff_seconds = o.backoff_s;
  s.backoff_cap_seconds = std::max(o.backoff_max_s, o.backoff_s);
  s.timeout_seconds = o.timeout_s;
  s.feishu_secret = o.feishu_secret;
  s.queue_capacity = static_cast<size_t>(o.queue);
  return s;
}

std::string targets_text(const std::vector<exporter::ChatTarget>& targets) {
  std::string text;
  for (const exporter::ChatTarget& t : targets) {
    text += (text.empty() ? "" : ", ") + t.kind->name + " " + exporter::masked_url(t.url);
  }
  return text;
}

}  // namespace

void setup_alert_relay(CLI::App& app, AlertRelayOptions& o) {
  app.add_option("--to", o.to,
                 "KIND:URL to post every notification to (repeatable): feishu:URL, lark:URL, "
                 "slack:URL, webhook:URL (plumb.alert/1 JSON)")
      ->required();
  app.add_option("--listen", o.listen,
                 "HOST:PORT to receive Alertmanager's webhook on (POST any path, e.g. "
                 "/alertmanager; GET /healthz); port 0 for any free port")
      ->capture_default_str();
  app.add_option("--retries", o.retries, "Retries after a refused or unanswered attempt")
      ->capture_default_str()->check(CLI::Range(0, 100));
  app.add_option("--backoff", o.backoff_s, "Seconds before the first retry, doubling each time")
      ->capture_default_str()->check(CLI::Range(0.0, 3600.0));
  app.add_option("--backoff-max", o.backoff_max_s, "The longest wait between two attempts")
      ->capture_default_str()->check(CLI::Range(0.0, 86400.0));
  app.add_option("--timeout", o.timeout_s, "Seconds one attempt may take, connecting included")
      ->capture_default_str()->check(CLI::Range(0.001, 3600.0));
  app.add_option("--feishu-secret", o.feishu_secret,
                 "The Feishu/Lark bot's signing secret (signature verification); also from "
                 "$PLUMB_FEISHU_SECRET, which keeps it out of the process list")
      ->envname("PLUMB_FEISHU_SECRET");
  app.add_option("--queue", o.queue,
                 "Notifications that may wait for the targets; past that Alertmanager gets 503 "
                 "and retries")
      ->capture_default_str()->check(CLI::Range(1, 1000000));
  app.add_option("--drain", o.drain_s,
                 "On SIGINT/SIGTERM, seconds to finish the queue before abandoning it")
      ->capture_default_str()->check(CLI::Range(0.0, 3600.0));
  app.footer("Exit status: 0 stopped by SIGINT/SIGTERM; 2 bad usage (an unknown --to kind, a URL "
             "not http(s), a malformed or busy --listen address). See docs/alert-relay.md.");
}

int run_alert_relay(const AlertRelayOptions& o) {
  std::vector<exporter::ChatTarget> targets;
  for (const std::string& spec : o.to) targets.push_back(exporter::parse_chat_target(spec));
  const auto log = stderr_log();
  exporter::SenderHooks hooks;
  hooks.log = log;
  hooks.now = [] {
    return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  };
  exporter::ChatSender sender(targets, sender_options(o), hooks);
  exporter::HttpServerOptions server_options;
  server_options.listen = o.listen;
  exporter::HttpServer server(server_options, [&](const exporter::HttpRequest& r) {
    return exporter::handle_alert_webhook(r, sender, log);
  });
  const std::atomic<bool>& stop = stop_on_signals();
  log(fmt::format("plumb alert-relay: listening on http://{}/alertmanager; relaying to {}",
                  server.bound_address(), targets_text(targets)));
  server.serve(stop);
  log("plumb alert-relay: stopping");
  sender.finish(o.drain_s);
  return 0;
}

}  // namespace plumb::cli
