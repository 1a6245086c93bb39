#include "cli/alert_relay_command.h"

#include <CLI/CLI.hpp>
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
#include "common/url_redact.h"
#include "exporter/alert_relay.h"
#include "exporter/chat_sender.h"
#include "exporter/http_server.h"

namespace plumb::cli {
namespace {

// One line at a time from the HTTP and worker threads; label values from Alertmanager are
// escaped so that no byte of theirs drives the terminal, and every secret of the settings
// (relay_secrets) is masked, whichever line would quote it.
std::function<void(const std::string&)> stderr_log(std::vector<std::string> secrets) {
  auto mutex = std::make_shared<std::mutex>();
  return [mutex, secrets = std::move(secrets)](const std::string& line) {
    std::lock_guard lock(*mutex);
    fmt::print(stderr, "{}\n", terminal_safe(mask_secrets(line, secrets), true));
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
    text += (text.empty() ? "" : ", ") + t.kind->name + " " + redact_url(t.url);
  }
  return text;
}

// An argument CLI11 did not expect, as its error quotes it: an option's name stays; a URL is
// rendered by redact_url; any other word (the secret after a mistyped --feishu-secret) and an
// option's value are masked whole.
std::string shown_argument(const std::string& arg) {
  if (!arg.starts_with('-')) return arg.find("://") != std::string::npos ? redact_url(arg) : kMask;
  const size_t eq = arg.find('=');
  return eq == std::string::npos ? arg : arg.substr(0, eq + 1) + kMask;
}

// CLI11's own "The following arguments were not expected: ..." quotes the arguments whole; the
// relay's extras are refused here instead, with the same message and exit code, masked.
void refuse_extras(const CLI::App& app) {
  const std::vector<std::string> extras = app.remaining();
  if (extras.empty()) return;
  std::vector<std::string> shown;
  for (const std::string& arg : extras) shown.push_back(shown_argument(arg));
  throw CLI::ExtrasError(app.get_name(), shown);
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
  app.allow_extras();
  app.parse_complete_callback([&app] { refuse_extras(app); });
  app.footer("Exit status: 0 stopped by SIGINT/SIGTERM; 2 bad usage (an unknown --to kind, a URL "
             "not http(s), a malformed or busy --listen address). See docs/alert-relay.md.");
}

int run_alert_relay(const AlertRelayOptions& o) {
  std::vector<exporter::ChatTarget> targets;
  for (const std::string& spec : o.to) targets.push_back(exporter::parse_chat_target(spec));
  const auto log = stderr_log(exporter::relay_secrets(targets, o.feishu_secret));
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
