// Byte-level walks over raw JSON text that simdjson does not offer: where the events array of a
// Chrome trace is, where to cut it between elements, and where an invalid byte sits. Used by the
// Chrome-trace scanner to hand simdjson one chunk at a time and to locate indexing errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace plumb::step {

inline constexpr size_t kNotFound = std::string_view::npos;

// The first index at or after `at` that is not JSON whitespace.
size_t skip_space(std::string_view text, size_t at);

// The index of the quote closing the string that opens at `open`; kNotFound when the text ends
// inside it.
size_t string_end(std::string_view text, size_t open);

// Where the events are: the '[' of the top-level "traceEvents" member, or of a top-level array.
// kNotFound when neither is seen (then the whole text is parsed as one document, and simdjson
// says what is wrong with it).
size_t find_events_array(std::string_view text);

// Walking the elements of an array a chunk at a time.
enum class Stop : uint8_t {
  kCut,          // after an element that reached the wanted size
  kArrayEnd,     // at the array's ']'
  kMalformed,    // a '}' closing the array
  kEnd,          // the text ended inside the array
  kEndInString,  // ... inside a string
};
struct Split {
  Stop stop;
  size_t at;  // kCut: just past the element; kArrayEnd/kMalformed: the bracket; else the size
};

// From `begin` (inside an array, between elements, outside strings): stops after the first
// element that ends at least `want` bytes after `begin`, at the array's end, or at the text's.
Split split_array(std::string_view text, size_t begin, size_t want);

// The offset of the first byte that does not continue valid UTF-8 (overlong forms, surrogates
// and code points past U+10FFFF included); nullopt when all is valid.
std::optional<size_t> first_invalid_utf8(std::string_view text);

// The offset of the first control character inside a string; nullopt when there is none.
std::optional<size_t> first_control_in_string(std::string_view text);

}  // namespace plumb::step
