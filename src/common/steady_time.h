// Elapsed time on the steady (monotonic) clock, as the commands and the supervisor time their
// phases and timeouts.
#pragma once

#include <chrono>

namespace plumb {

// Seconds from `start` to now.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Now in seconds from the steady clock's epoch (a point fixed while the process runs).
inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace plumb
