// libFuzzer target: any bytes as a server-sent event stream, fed to the reader in pieces whose
// sizes the first bytes choose. The reader never crashes and keeps its promises: the events do
// not depend on where the stream was split, no event exceeds the size limit, and a stream past
// the limit is reported as oversize (never grown).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "serve/sse.h"

namespace {

using plumb::serve::SseEvent;
using plumb::serve::SseParser;

struct Result {
  std::vector<std::string> events;  // type, id and data of each, joined
  SseParser::Status status = SseParser::Status::ok;
};

void record(Result& out, const SseEvent& event) {
  if (event.data.size() > plumb::serve::kMaxSseEventBytes) std::abort();
  std::string joined(event.type);
  joined.push_back('\0');
  joined.append(event.id).push_back('\0');
  joined.append(event.data);
  out.events.push_back(std::move(joined));
}

Result parse(std::string_view stream, std::string_view splits) {
  Result out;
  SseParser parser;
  size_t k = 0;
  while (!stream.empty() && out.status == SseParser::Status::ok) {
    size_t size = k < splits.size() ? static_cast<unsigned char>(splits[k++]) + 1 : stream.size();
    size = std::min(size, stream.size());
    out.status = parser.feed(stream.substr(0, size), [&](const SseEvent& e) {
      record(out, e);
      return true;
    });
    stream.remove_prefix(size);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t split_bytes = input.empty() ? 0 : static_cast<unsigned char>(input[0]) % 16;
  split_bytes = std::min(split_bytes, input.size() - std::min<size_t>(input.size(), 1));
  std::string_view splits = input.substr(input.empty() ? 0 : 1, split_bytes);
  std::string_view stream = input.substr(std::min(input.size(), 1 + split_bytes));
  Result whole = parse(stream, {});
  Result pieces = parse(stream, splits);
  if (whole.status == SseParser::Status::ok && pieces.status == SseParser::Status::ok &&
      whole.events != pieces.events) {
    std::abort();
  }
  return 0;
}
