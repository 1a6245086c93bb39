// SIGINT and SIGTERM as a flag that a long-running command polls (plumb exporter and
// alert-relay serve until it is set): a signal handler can safely do nothing more.
#pragma once

#include <atomic>

namespace plumb::cli {

// Installs the handlers (once is enough; again is harmless) and returns the flag they set.
const std::atomic<bool>& stop_on_signals();

}  // namespace plumb::cli
