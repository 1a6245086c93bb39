// What plumb serve sends and what it saw: one request of a workload and its record. Every time is
// nanoseconds on CLOCK_MONOTONIC from the run's start (docs/serve.md, "Scheduling"): a latency
// starts at the request's *scheduled* time, never at the time the client got round to sending it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::serve {

using Nanos = std::int64_t;
constexpr Nanos kNoTime = -1;
inline constexpr double kNsPerMs = 1e6;

// Nanoseconds as the milliseconds the summaries show.
inline double ms(Nanos ns) { return static_cast<double>(ns) / kNsPerMs; }

// Now on CLOCK_MONOTONIC, in nanoseconds.
Nanos monotonic_ns();

// One request of a workload: what to send and when it is due.
struct RequestSpec {
  std::int64_t index = 0;      // 0.. in the order of the workload
  Nanos scheduled_ns = 0;      // open loop: its arrival; closed loop: set when a slot frees
  std::string prompt;          // the text sent (a prompt, or a chat's user message)
  int input_tokens = 0;        // the prompt's length as the workload made it; 0 when unknown
  int max_output_tokens = 0;   // max_tokens / max_new_tokens asked for; 0: the server's default
  bool ignore_eos = true;      // ask the server to produce max_output_tokens exactly where it can
};

// What went wrong with a request: each kind is counted apart (docs/serve.md, "Errors").
enum class ErrorKind {
  none,
  connect,      // refused, unreachable, name not resolved, TLS handshake failed
  http_status,  // an answer other than 2xx
  timeout,      // no end within --timeout from being sent (a server that hangs mid-stream)
  dropped,      // the connection closed before the stream's end
  malformed,    // a stream or body plumb could not read (bad SSE, bad JSON)
  server,       // the server said so inside the stream (an error event or object)
};
std::string_view error_kind_name(ErrorKind kind);  // "connect", "http_status", ...
std::vector<ErrorKind> error_kinds();              // every kind but none, in this order

// Where a request's output token count came from.
enum class TokenSource {
  usage,   // the server's usage fields (OpenAI's stream_options.include_usage, TGI's details)
  chunks,  // counted: one token per content chunk (the server gave no usage)
};
std::string_view token_source_name(TokenSource source);  // "usage", "chunks"

// One content chunk of a stream as it arrived.
struct Chunk {
  Nanos at_ns = 0;
  int tokens = 1;  // tokens it carried where the server says (TGI, Triton); else 1
};

// What happened to one request.
struct RequestRecord {
  std::int64_t index = 0;
  Nanos scheduled_ns = 0;  // when it was due
  Nanos ready_ns = 0;      // when it could go: its scheduled time, or later when it waited for a
                           // concurrency slot (--concurrency caps an open loop)
  Nanos sent_ns = kNoTime;         // handed to the transport
  Nanos first_token_ns = kNoTime;  // the first chunk carrying content
  Nanos end_ns = kNoTime;          // the stream's end (or the error)
  std::vector<Chunk> chunks;       // content chunks in arrival order
  int input_tokens = 0;            // from usage where given, else the workload's count
  int output_tokens = 0;           // from usage where given, else the chunks' tokens
  TokenSource token_source = TokenSource::chunks;
  ErrorKind error = ErrorKind::none;
  int http_status = 0;
  std::string error_detail;  // one line: "HTTP 500: overloaded", "connection refused"

  bool ok() const { return error == ErrorKind::none; }
};

// The requests of one run and how they are released.
struct Workload {
  std::vector<RequestSpec> requests;  // open loop: scheduled_ns ascending
  bool closed_loop = false;           // each request is due when one in flight ends
  int concurrency = 0;                // in flight at most (closed loop: exactly); 0 = no cap
  Nanos duration_ns = 0;              // stop releasing requests after this; 0 = release all
};

}  // namespace plumb::serve
