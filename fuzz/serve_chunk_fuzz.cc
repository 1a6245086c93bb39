// libFuzzer target: any bytes as the data of one server-sent event, read by every API of plumb
// serve's table (serve/api.h) and applied to a record as the engine applies it. Nothing throws;
// an error is a kind with a one-line detail; a content chunk carries at least one token at the
// time it was read; an end marker sets the end time.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "serve/api.h"
#include "serve/client_transfer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumb::serve;  // NOLINT: a fuzz target's one function
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const ApiRow& api : api_table()) {
    EventReading reading = api.read(text);
    if (reading.error != ErrorKind::none && reading.error_detail.empty()) std::abort();
    if (reading.tokens < 1) std::abort();
    if (reading.has_usage && reading.completion_tokens < 0) std::abort();
    RequestRecord record;
    StreamState state;
    SseEvent event{"", text, ""};
    bool go_on = apply_event(api, event, 7, state, record);
    if (go_on != (record.error == ErrorKind::none)) std::abort();
    if (!record.chunks.empty() && (record.chunks[0].at_ns != 7 || record.first_token_ns != 7)) {
      std::abort();
    }
    if (state.ended && record.end_ns != 7) std::abort();
  }
  return 0;
}
