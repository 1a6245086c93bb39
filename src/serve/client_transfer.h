// One request in flight in the engine (serve/client.cc): its reused easy handle, its SSE
// reader, and how the bytes it reads and the way it ends become its record. The reading and
// the verdict are plain functions of what arrived, tested without a network.
#pragma once

#include <curl/curl.h>

#include <string>
#include <string_view>

#include "serve/api.h"
#include "serve/receive_time.h"
#include "serve/request.h"
#include "serve/sse.h"

namespace plumb::exporter {
struct CurlApi;
}

namespace plumb::serve {

// What a stream has said so far, beyond the record's chunks.
struct StreamState {
  bool ended = false;    // the API's end marker was read
  bool stopped = false;  // an error event or a malformed stream: read no further
  int usage_prompt = -1;
  int usage_completion = -1;
};

// Applies one event of `api`'s stream read at `at_ns` to `record`; false once the stream must
// not be read further (an error event, a malformed event).
bool apply_event(const ApiRow& api, const SseEvent& event, Nanos at_ns, StreamState& state,
                 RequestRecord& record);

// How a transfer ended, as libcurl and the socket said.
struct TransferEnd {
  CURLcode code = CURLE_OK;
  long http_status = 0;
  bool connected = false;       // a connection was made (CURLINFO_CONNECT_TIME_T > 0)
  int os_errno = 0;             // CURLINFO_OS_ERRNO
  std::string_view curl_error;  // CURLOPT_ERRORBUFFER's text
  std::string_view body;        // the first bytes of a non-2xx answer
  std::string_view content_type;  // CURLINFO_CONTENT_TYPE; "" when none
};

// Settles `record` at `now` once its transfer is done: its error kind and one-line detail
// (unless reading the stream already set one), its end time, its token counts and their source.
// `host` names the server in a connect error; `timeout_s` is RunControl::request_timeout_s.
void settle_record(const ApiRow& api, const TransferEnd& end, const StreamState& state,
                   const RequestSpec& spec, std::string_view host, double timeout_s, Nanos now,
                   RequestRecord& record);

// The error_detail of an HTTP error: "HTTP 500: overloaded" (the body's first 200 bytes on one
// line), or "HTTP 404" for an empty body.
std::string http_status_detail(long status, std::string_view body);
inline constexpr size_t kErrorBodyBytes = 200;

// One request's transfer: reused from request to request, so its easy handle keeps its options
// and its buffers their capacity.
struct Transfer {
  const exporter::CurlApi* curl = nullptr;
  const ApiRow* api = nullptr;
  Nanos t0 = 0;  // the run's start on CLOCK_MONOTONIC
  PendingReceive* received = nullptr;  // the kernel's receive time of the socket being read
  CURL* easy = nullptr;
  const RequestSpec* spec = nullptr;
  RequestRecord* record = nullptr;
  SseParser sse;
  StreamState state;
  std::string body;        // the request's JSON
  std::string error_body;  // the first bytes of a non-2xx answer
  char error_buffer[CURL_ERROR_SIZE] = {};
  bool busy = false;
  bool status_known = false;
  bool status_failed = false;

  // Ready for `spec`, whose record is `record`.
  void begin(const RequestSpec& request, RequestRecord& out);
  // libcurl's CURLOPT_WRITEFUNCTION: the bytes' time is the kernel's receive time of the socket
  // the engine is reading (`received`), else one clock read, the time they were read.
  static size_t on_write(char* data, size_t size, size_t count, void* self);

 private:
  size_t write(std::string_view bytes);
  int active_socket() const;  // the socket libcurl reads this transfer from; -1 when none
};

}  // namespace plumb::serve
