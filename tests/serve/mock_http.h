// A blocking HTTP/1.1 exchange for the reference server's tests: one request on a fresh
// connection, the raw answer read until the server closes it or `timeout_s` passes.
#pragma once

#include <string>
#include <string_view>

namespace plumb::serve::testing {

struct RawAnswer {
  std::string bytes;      // everything received
  bool closed = false;    // the server closed the connection (else: the timeout)
};

// POST `body` to `path` (GET when body is empty and method is "GET") with "Connection: close"
// and `extra_headers` ("Name: value\r\n" each).
RawAnswer http_exchange(int port, std::string_view method, std::string_view path,
                        std::string_view body, std::string_view extra_headers = {},
                        double timeout_s = 5);

// The body of a chunked answer decoded; `complete` false when the last chunk never came.
struct Dechunked {
  std::string head;  // status line and headers, up to the blank line
  std::string body;
  bool complete = false;
};
Dechunked dechunk(const std::string& answer);

// `text` with every "created":<digits> made "created":0 (the answer's Unix time).
std::string without_created(std::string text);

}  // namespace plumb::serve::testing
