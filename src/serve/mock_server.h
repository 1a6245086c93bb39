// The reference server of `plumb serve`'s tests and of `plumb serve mock`: an HTTP/1.1 server
// that streams tokens on a programmed schedule for the four APIs of serve/mock_wire.h, so that
// every latency plumb measures can be checked against a known truth (docs/serve.md).
//
// Capacity model: `slots` generations at once (the rest wait FIFO, and that wait is part of their
// TTFT); a generation's first token is due ttft after it got its slot, and each next one
// gap = itl + itl_per_active × (active − 1) after the previous one's due time (a decode bound by
// memory bandwidth: each step reads the weights once and every active sequence's KV cache).
// Due times are absolute deadlines on CLOCK_MONOTONIC, served by a timerfd: no drift accumulates.
//
// One thread, epoll, non-blocking sockets. The truth — when each request arrived, got its slot
// and each token was written — is kept for the tests (truth()) and optionally written as JSONL.
// GET /metrics answers in the Prometheus text format with vLLM's metric names.
#pragma once

#include "serve/mock_config.h"
#include "serve/request.h"

#include <memory>
#include <string>
#include <vector>

namespace plumb::serve {

// What the server did with one generation request (times: CLOCK_MONOTONIC ns, absolute).
struct MockTruth {
  std::int64_t index = 0;   // arrival order, 0-based (what error rules count)
  std::string api;          // "openai-completions", ...
  std::string prompt_head;  // the prompt's first 64 bytes: how a test finds its request
  Nanos arrived_ns = 0;     // the request was complete
  Nanos started_ns = kNoTime;  // it got a slot
  std::vector<Nanos> token_ns;  // each token's write (just before the write call)
  Nanos end_ns = kNoTime;   // the last byte written, or the connection closed
  int status = 200;
  int tokens_planned = 0;
  // "completed", "error" (an HTTP status), "bad_request", "dropped", "malformed", "hang",
  // "client_closed"; "" while it runs.
  std::string outcome;
};

class MockServer {
 public:
  // Binds and listens at once: throws plumb::Error "plumb serve mock: cannot listen on
  // 127.0.0.1:8000: Address already in use".
  explicit MockServer(MockConfig config);
  ~MockServer();
  MockServer(const MockServer&) = delete;
  MockServer& operator=(const MockServer&) = delete;

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT"
  void start();  // serves on a thread of its own until stop()
  void stop();   // idempotent; closes every connection
  std::vector<MockTruth> truth() const;  // a copy, safe while it serves
  // The CLOCK_MONOTONIC ns now: the base of every MockTruth time.
  static Nanos now_ns();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The JSONL line of one truth record (the log's format).
std::string mock_truth_json_line(const MockTruth& truth);

}  // namespace plumb::serve
