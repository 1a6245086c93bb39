// plumb alert-relay: receives Alertmanager's webhook (payload version 4) and posts each
// notification to Feishu/Lark bots, Slack-compatible webhooks or generic JSON webhooks (--to
// KIND:URL, any number), with retries and back-off on a worker thread. See docs/alert-relay.md.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct AlertRelayOptions {
  std::vector<std::string> to;  // KIND:URL
  std::string listen = "127.0.0.1:9465";
  int retries = 4;
  double backoff_s = 1;
  double backoff_max_s = 60;
  double timeout_s = 10;
  std::string feishu_secret;
  int queue = 256;
  double drain_s = 10;
};

void setup_alert_relay(CLI::App& app, AlertRelayOptions& options);
int run_alert_relay(const AlertRelayOptions& options);

}  // namespace plumb::cli
