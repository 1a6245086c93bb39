// libFuzzer target: any bytes as what a client sent the HTTP server. The parser never throws and
// keeps its promises: a complete request took at least one byte and no more than it was given,
// its header part fits the limit, its body fits the limit; an error carries a 4xx/5xx status and
// a message; and parsing the bytes after a complete request (pipelining) holds to the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "exporter/http_request.h"

namespace {

void check(std::string_view text, const plumb::exporter::HttpLimits& limits, int depth) {
  using State = plumb::exporter::HttpParse::State;
  const plumb::exporter::HttpParse p = plumb::exporter::parse_http_request(text, limits);
  if (p.state == State::kError) {
    if (p.status < 400 || p.status > 599 || p.message.empty()) std::abort();
    return;
  }
  if (p.state == State::kIncomplete) return;
  if (p.consumed == 0 || p.consumed > text.size()) std::abort();
  if (p.request.body.size() > limits.max_body_bytes) std::abort();
  if (p.consumed - p.request.body.size() > limits.max_header_bytes) std::abort();
  if (p.request.method.empty() || p.request.target.empty() || p.request.path.empty()) std::abort();
  for (const auto& [name, value] : p.request.headers) {
    for (char c : name) {
      if (c >= 'A' && c <= 'Z') std::abort();  // names are lower-cased
    }
  }
  if (depth < 8) check(text.substr(p.consumed), limits, depth + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Small limits so that the fuzzer reaches 431 and 413 with short inputs.
  plumb::exporter::HttpLimits limits;
  limits.max_header_bytes = 512;
  limits.max_body_bytes = 64;
  check(text, limits, 0);
  return 0;
}
