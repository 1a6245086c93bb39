// Reading a trace file whole into memory, plain or gzip (by its magic bytes, not its name),
// padded as simdjson needs. One file at a time per reading thread keeps the peak memory at the
// largest rank file times the threads, not the whole set.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace plumb::step {

struct TraceText {
  std::string source;              // the path, for messages
  std::unique_ptr<char[]> data;    // size + padding bytes; the padding is zero
  size_t size = 0;
  size_t compressed_size = 0;      // the file's size on disk
  std::string_view view() const { return {data.get(), size}; }
};

// Padding simdjson requires after the text (SIMDJSON_PADDING).
inline constexpr size_t kTracePadding = 64;

// Reads `path` (plain or gzip). A missing or unreadable file, a truncated or corrupt gzip stream
// ("rank-1.json.gz: the gzip stream ends at byte 81920 (after 1048576 bytes of text) without its
// end marker: the file is truncated"), or a
// text with NUL bytes throw plumb::Error naming the file; exit 2.
TraceText read_trace_text(const std::string& path);

// The same for bytes already in memory (fuzzing, tests); `source` names them in messages.
TraceText trace_text_from_bytes(std::string_view bytes, std::string source);

}  // namespace plumb::step
