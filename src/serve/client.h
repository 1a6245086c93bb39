// The load generator's engine: one event loop that releases a workload's requests on their
// absolute schedule to an HTTP server and records, for each, when it was due, sent, got its
// first token, each chunk and its end (serve/request.h). libcurl's multi interface on epoll
// (HTTP/1.1, HTTP/2, TLS), server-sent events read as they arrive (docs/serve.md).
#pragma once

#include "serve/request.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace plumb::serve {

// Where requests go and how they are spoken.
struct Endpoint {
  std::string url;    // the full URL of the streaming endpoint, or the server's base URL
  std::string api;    // the API's name in serve/api.h's table ("openai-completions", ...)
  std::string model;  // --model; the OpenAI APIs require it
  std::vector<std::string> headers;  // "Name: value" (an Authorization header, say)
  bool http2 = false;                // ask for HTTP/2 (h2c prior knowledge on http://, ALPN on https)
  bool insecure = false;             // TLS without verifying the peer (a self-signed test server)
  std::string cacert;                // --cacert: verify the peer against this CA bundle (PEM)
};

struct RunControl {
  double request_timeout_s = 600;   // from sent to the stream's end
  double connect_timeout_s = 10;
  // Called on the loop's thread after each request ends (ok or not); a completed-count progress
  // line, early stopping. Returning false stops releasing requests (those in flight finish).
  std::function<bool(const RequestRecord&)> on_done;
  const std::atomic<bool>* stop = nullptr;  // set from a signal handler: stop releasing
};

// What one run gave.
struct RunOutcome {
  std::vector<RequestRecord> records;  // one per released request, by index
  Nanos duration_ns = 0;               // from the run's start to the last request's end
  std::int64_t not_released = 0;       // requests the duration limit or a stop left unsent
  Nanos start_ns = 0;  // the run's start on CLOCK_MONOTONIC, absolute: what every time counts from
};

// Runs `workload` against `endpoint`. Throws plumb::Error (exit 2) for what makes every request
// fail the same way before any is sent (a malformed URL, an unknown API, libcurl missing);
// a request's own failure is in its record, never thrown.
RunOutcome run_load(const Endpoint& endpoint, const Workload& workload, const RunControl& control);

}  // namespace plumb::serve
