// Retrying a record's write when the store's server dropped the connection or refused the
// transaction for a reason that passes (PostgreSQL: a serialization failure, a deadlock, a
// restart): the whole record's transaction is run again on a new connection, after a bounded
// back-off; the last failure is the Error. The SQLite store never throws RetryableError (its
// writers queue on the busy timeout instead). docs/store.md, "Many writers".
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/error.h"

namespace plumb::baseline {

// A failure after which the same transaction, run again, may succeed.
class RetryableError : public Error {
 public:
  using Error::Error;
};

// The waits before each retry: doubling from 50 ms, at most 2 s, 9 retries — about 10 s in all,
// what a PostgreSQL restart or fail-over to a standby takes (a fast shutdown and start of a small
// cluster: 1-3 s), without holding a node's health check for long.
inline constexpr std::chrono::milliseconds kFirstRetryWait{50};
inline constexpr std::chrono::milliseconds kMaxRetryWait{2000};
inline constexpr int kMaxRetries = 9;

template <class Fn>
auto with_retries(Fn&& fn) {
  std::chrono::milliseconds wait = kFirstRetryWait;
  for (int retry = 0;; ++retry) {
    try {
      return fn();
    } catch (const RetryableError&) {
      if (retry == kMaxRetries) throw;
    }
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, kMaxRetryWait);
  }
}

}  // namespace plumb::baseline
