// The HTTP/1.x request parser of http_server.h, as a pure function: bytes received so far and the
// limits in, one of "need more bytes", "a complete request (and how many bytes it took)" or "an
// error status with its text" out. No socket in sight, so that it is unit-tested and fuzzed
// (fuzz/http_request_fuzz.cc). RFC 9112 is the reference for the syntax.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "exporter/http_server.h"

namespace plumb::exporter {

struct HttpLimits {
  std::size_t max_header_bytes = 16 * 1024;      // request line + headers + the blank line
  std::size_t max_body_bytes = 4 * 1024 * 1024;  // Content-Length above it: 413
};

struct HttpParse {
  enum class State { kIncomplete, kComplete, kError };
  State state = State::kIncomplete;
  HttpRequest request;        // kComplete
  std::size_t consumed = 0;   // kComplete: bytes of the buffer this request took
  bool keep_alive = false;    // kComplete: the connection stays open after the answer
  bool head = false;          // kComplete: HEAD, the answer carries no body
  int status = 0;             // kError: 400, 411, 413, 431, 501, 505
  std::string message;        // kError: one line for the answer's body, without "\n"
};

// Parses the request at the start of `buffer` (pipelined requests follow it). Empty lines before
// the request line are skipped (RFC 9112 section 2.2). Lines may end in CRLF or a bare LF.
HttpParse parse_http_request(std::string_view buffer, const HttpLimits& limits);

// "OK", "Not Found", ...; "" for a status it does not know.
std::string_view http_reason(int status);

// The whole answer: status line, Content-Type, Content-Length, Connection, the body unless `head`.
// Appended to `out` so that pipelined answers share one buffer.
void append_http_response(std::string& out, const HttpResponse& response, bool keep_alive,
                          bool head);

}  // namespace plumb::exporter
