#include "cli/stop_signal.h"

#include <signal.h>

namespace plumb::cli {
namespace {

std::atomic<bool> g_signalled_stop{false};

void on_stop_signal(int) { g_signalled_stop = true; }

}  // namespace

const std::atomic<bool>& stop_on_signals() {
  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  return g_signalled_stop;
}

}  // namespace plumb::cli
