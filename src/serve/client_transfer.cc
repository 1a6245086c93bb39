#include "serve/client_transfer.h"

#include <algorithm>
#include <cstring>
#include <ctime>

#include "exporter/curl_library.h"

namespace plumb::serve {
namespace {

Nanos since(Nanos t0) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Nanos{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec - t0;
}

void fail(RequestRecord& record, ErrorKind kind, std::string detail, Nanos at_ns) {
  record.error = kind;
  record.error_detail = std::move(detail);
  if (record.end_ns == kNoTime) record.end_ns = at_ns;
}

// libcurl's codes for a connection that never carried the request: refused, unreachable, a
// name that does not resolve, a failed TLS handshake or certificate.
bool is_connect_code(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
      return true;
    default:
      return false;
  }
}

std::string connect_detail(const TransferEnd& end, std::string_view host) {
  if (end.code == CURLE_COULDNT_CONNECT && end.os_errno != 0) {
    return "cannot connect to " + std::string(host) + ": " + std::strerror(end.os_errno);
  }
  return std::string(end.curl_error.empty() ? "cannot connect" : end.curl_error);
}

std::string format_seconds(double s) {
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

// The verdict on a transfer whose stream raised no error of its own.
void settle_error(const ApiRow& api, const TransferEnd& end, const StreamState& state,
                  std::string_view host, double timeout_s, Nanos now, RequestRecord& record) {
  if (end.http_status != 0 && (end.http_status < 200 || end.http_status > 299)) {
    return fail(record, ErrorKind::http_status, http_status_detail(end.http_status, end.body), now);
  }
  if (state.ended) return;  // whatever came after the end marker does not matter
  if (end.code == CURLE_OK && record.chunks.empty() && !end.content_type.empty() &&
      !end.content_type.starts_with("text/event-stream")) {  // a server that ignored "stream"
    return fail(record, ErrorKind::malformed,
                "the answer is not server-sent events (Content-Type: " +
                    std::string(end.content_type) + ")",
                now);
  }
  if (end.code == CURLE_OK) {
    if (api.ends_with_stream) return;
    return fail(record, ErrorKind::dropped,
                "the stream ended before " + std::string(api.end_marker), now);
  }
  if (is_connect_code(end.code) || (end.code == CURLE_OPERATION_TIMEDOUT && !end.connected)) {
    return fail(record, ErrorKind::connect, connect_detail(end, host), now);
  }
  if (end.code == CURLE_OPERATION_TIMEDOUT) {
    return fail(record, ErrorKind::timeout,
                "no end within " + format_seconds(timeout_s) + " s of being sent (" +
                    std::to_string(record.chunks.size()) + " chunks read)",
                now);
  }
  std::string why(end.curl_error.empty() ? "" : end.curl_error);
  fail(record, ErrorKind::dropped,
       "the connection closed before " + std::string(api.end_marker) +
           (why.empty() ? "" : " (" + why + ")"),
       now);
}

}  // namespace

bool apply_event(const ApiRow& api, const SseEvent& event, Nanos at_ns, StreamState& state,
                 RequestRecord& record) {
  if (state.ended) return true;
  if (event.type == "error") {  // an SSE error event (SGLang, some proxies)
    fail(record, ErrorKind::server, std::string(event.data), at_ns);
    state.stopped = true;
    return false;
  }
  EventReading reading = api.read(event.data);
  if (reading.error != ErrorKind::none) {
    fail(record, reading.error, std::move(reading.error_detail), at_ns);
    state.stopped = true;
    return false;
  }
  if (reading.content) {
    record.chunks.push_back({at_ns, reading.tokens});
    if (record.first_token_ns == kNoTime) record.first_token_ns = at_ns;
  }
  if (reading.prompt_tokens >= 0) state.usage_prompt = reading.prompt_tokens;
  if (reading.has_usage) state.usage_completion = reading.completion_tokens;
  if (reading.end) {
    state.ended = true;
    record.end_ns = at_ns;
  }
  return true;
}

std::string http_status_detail(long status, std::string_view body) {
  std::string detail = "HTTP " + std::to_string(status);
  std::string line(body.substr(0, kErrorBodyBytes));
  std::replace_if(
      line.begin(), line.end(),
      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }, ' ');
  size_t first = line.find_first_not_of(' ');
  if (first == std::string::npos) return detail;
  line.erase(line.find_last_not_of(' ') + 1);
  return detail + ": " + line.substr(first);
}

void settle_record(const ApiRow& api, const TransferEnd& end, const StreamState& state,
                   const RequestSpec& spec, std::string_view host, double timeout_s, Nanos now,
                   RequestRecord& record) {
  record.http_status = static_cast<int>(end.http_status);
  if (record.error == ErrorKind::none) settle_error(api, end, state, host, timeout_s, now, record);
  if (record.end_ns == kNoTime) record.end_ns = now;
  record.input_tokens = state.usage_prompt >= 0 ? state.usage_prompt : spec.input_tokens;
  if (state.usage_completion >= 0) {
    record.output_tokens = state.usage_completion;
    record.token_source = TokenSource::usage;
  } else {
    record.output_tokens = 0;
    for (const Chunk& chunk : record.chunks) record.output_tokens += chunk.tokens;
    record.token_source = TokenSource::chunks;
  }
}

void Transfer::begin(const RequestSpec& request, RequestRecord& out) {
  spec = &request;
  record = &out;
  sse.reset();
  state = StreamState{};
  error_body.clear();
  error_buffer[0] = '\0';
  busy = true;
  status_known = false;
  status_failed = false;
}

size_t Transfer::on_write(char* data, size_t size, size_t count, void* self) {
  try {
    return static_cast<Transfer*>(self)->write(std::string_view(data, size * count));
  } catch (...) {  // out of memory: end this transfer, never unwind through libcurl
    return 0;
  }
}

int Transfer::active_socket() const {
  curl_socket_t socket = CURL_SOCKET_BAD;
  if (curl->easy_getinfo(easy, CURLINFO_ACTIVESOCKET, &socket) != CURLE_OK) return -1;
  return socket == CURL_SOCKET_BAD ? -1 : static_cast<int>(socket);
}

size_t Transfer::write(std::string_view bytes) {
  Nanos now = since(t0);
  Nanos floor = record->chunks.empty() ? record->sent_ns : record->chunks.back().at_ns;
  Nanos at = received != nullptr ? received->take(active_socket(), floor, now) : now;
  if (!status_known) {
    long status = 0;
    curl->easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    status_known = true;
    status_failed = status < 200 || status > 299;
  }
  if (status_failed) {  // keep the start of the body for the error line, then hang up
    error_body.append(
        bytes.substr(0, kErrorBodyBytes - std::min(kErrorBodyBytes, error_body.size())));
    return error_body.size() < kErrorBodyBytes ? bytes.size() : 0;
  }
  if (state.stopped || state.ended) return bytes.size();
  auto status = sse.feed(
      bytes, [&](const SseEvent& event) { return apply_event(*api, event, at, state, *record); });
  if (status == SseParser::Status::oversize) {
    fail(*record, ErrorKind::malformed,
         "an SSE event over " + std::to_string(kMaxSseEventBytes) + " bytes", at);
    return 0;
  }
  return record->error == ErrorKind::malformed ? 0 : bytes.size();
}

}  // namespace plumb::serve
