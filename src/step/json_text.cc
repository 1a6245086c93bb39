#include "step/json_text.h"

#include <optional>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace plumb::step {
namespace {

constexpr size_t kLane = 16;  // bytes compared at once

// The first offset ≥ `at` holding a quote or a backslash (`in_string`), else a quote or a
// bracket; text.size() when none does. Sixteen bytes at a time where SSE2 is there (every
// x86-64).
size_t next_structural(std::string_view text, size_t at, bool in_string) {
  const char* p = text.data();
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i case_bit = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{');    // '[' | 0x20 == '{'
  const __m128i close = _mm_set1_epi8('}');   // ']' | 0x20 == '}'
  for (; at + kLane <= text.size(); at += kLane) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    __m128i hit;
    if (in_string) {
      hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
    } else {
      __m128i folded = _mm_or_si128(v, case_bit);
      hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                         _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)));
    }
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) return at + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  for (; at < text.size(); ++at) {
    char c = p[at];
    if (c == '"' || (in_string ? c == '\\' : (c == '{' || c == '}' || c == '[' || c == ']'))) {
      return at;
    }
  }
  return text.size();
}

}  // namespace

// The offset of the first byte that does not continue valid UTF-8 (overlong forms, surrogates
// and code points past U+10FFFF included); nullopt when all is valid.
std::optional<size_t> first_invalid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      ++i;
      continue;
    }
    size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC2 ? 2 : 0;
    if (length == 0 || byte > 0xF4 || i + length > text.size()) return i;
    uint32_t code = byte & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return i;
      code = (code << 6) | (next & 0x3F);
    }
    bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
    if (overlong || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return i;
    i += length;
  }
  return std::nullopt;
}

// The offset of the first control character inside a string; nullopt when there is none.
std::optional<size_t> first_control_in_string(std::string_view text) {
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string && static_cast<unsigned char>(c) < 0x20) return i;
    if (c == '"') {
      in_string = !in_string;
    } else if (c == '\\' && in_string) {
      ++i;  // the escaped character
    }
  }
  return std::nullopt;
}

size_t skip_space(std::string_view text, size_t at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\n' || text[at] == '\r' ||
                              text[at] == '\t')) {
    ++at;
  }
  return at;
}

// The index of the quote closing the string that opens at `open`; kNotFound when the text ends
// inside it.
size_t string_end(std::string_view text, size_t open) {
  for (size_t at = open + 1;; at += 2) {
    at = next_structural(text, at, true);
    if (at >= text.size()) return kNotFound;
    if (text[at] == '"') return at;
  }
}

// Where the events are: the '[' of the top-level "traceEvents" member, or of a top-level array.
// kNotFound when neither is seen (then the whole text is parsed as one document, and simdjson
// says what is wrong with it).
size_t find_events_array(std::string_view text) {
  size_t at = skip_space(text, 0);
  if (at >= text.size() || text[at] == '[') return at < text.size() ? at : kNotFound;
  if (text[at] != '{') return kNotFound;
  int depth = 1;
  bool expect_key = true;
  for (++at; at < text.size(); ++at) {
    char c = text[at];
    if (c == '"') {
      size_t end = string_end(text, at);
      if (end == kNotFound) return kNotFound;
      if (depth == 1 && expect_key && text.substr(at + 1, end - at - 1) == "traceEvents") {
        size_t colon = skip_space(text, end + 1);
        size_t value = colon < text.size() && text[colon] == ':' ? skip_space(text, colon + 1) : colon;
        if (value < text.size() && text[value] == '[') return value;
      }
      expect_key = false;
      at = end;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return kNotFound;
    } else if (c == ',' && depth == 1) {
      expect_key = true;
    }
  }
  return kNotFound;
}

namespace {

// The splitter's position in the text: bracket depth inside the array and whether inside a
// string (with a pending escape).
struct SplitState {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
};

// A bracket outside strings at `at`; a Split when it ends the walk.
std::optional<Split> on_bracket(std::string_view text, size_t at, size_t begin, size_t want,
                                SplitState& st) {
  char c = text[at];
  if (c == '{' || c == '[') {
    ++st.depth;
    return std::nullopt;
  }
  if (st.depth == 0) return Split{c == ']' ? Stop::kArrayEnd : Stop::kMalformed, at};
  if (--st.depth == 0 && at + 1 - begin >= want) return Split{Stop::kCut, at + 1};
  return std::nullopt;
}

// Byte by byte over [at, end).
std::optional<Split> split_bytes(std::string_view text, size_t at, size_t end, size_t begin,
                                 size_t want, SplitState& st) {
  for (; at < end; ++at) {
    char c = text[at];
    if (st.in_string) {
      if (st.escaped) {
        st.escaped = false;
      } else if (c == '\\') {
        st.escaped = true;
      } else if (c == '"') {
        st.in_string = false;
      }
    } else if (c == '"') {
      st.in_string = true;
    } else if (c == '{' || c == '[' || c == '}' || c == ']') {
      if (std::optional<Split> split = on_bracket(text, at, begin, want, st)) return split;
    }
  }
  return std::nullopt;
}

#ifdef __SSE2__
constexpr size_t kBlock = 64;

// Bits of the 64 bytes at `p` equal to `c` (after OR-ing `fold` into each byte).
uint64_t block_mask(const char* p, char c, char fold) {
  uint64_t mask = 0;
  for (size_t i = 0; i < kBlock; i += kLane) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    if (fold != 0) v = _mm_or_si128(v, _mm_set1_epi8(fold));
    auto bits = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c))));
    mask |= static_cast<uint64_t>(bits) << i;
  }
  return mask;
}

// Bit i: the XOR of bits 0..i (1 from an opening quote up to the byte before its closing one).
uint64_t prefix_xor(uint64_t x) {
  for (int shift = 1; shift < 64; shift *= 2) x ^= x << shift;
  return x;
}

// One block without backslashes: strings found from the quotes alone (simdjson's method), then
// only the brackets outside strings are visited.
std::optional<Split> split_block(std::string_view text, size_t at, size_t begin, size_t want,
                                 SplitState& st) {
  const char* p = text.data() + at;
  uint64_t quotes = block_mask(p, '"', 0);
  uint64_t inside = prefix_xor(quotes) ^ (st.in_string ? ~uint64_t{0} : 0);
  uint64_t brackets = (block_mask(p, '{', 0x20) | block_mask(p, '}', 0x20)) & ~inside & ~quotes;
  while (brackets != 0) {
    size_t i = static_cast<size_t>(__builtin_ctzll(brackets));
    if (std::optional<Split> split = on_bracket(text, at + i, begin, want, st)) return split;
    brackets &= brackets - 1;
  }
  st.in_string = (inside >> 63) != 0;
  return std::nullopt;
}
#endif

}  // namespace

Split split_array(std::string_view text, size_t begin, size_t want) {
  SplitState st;
  size_t at = begin;
#ifdef __SSE2__
  // 64 bytes at a time; a block with a backslash (rare in traces) goes byte by byte, and so does
  // the one after an escape that crossed a block boundary.
  while (at + kBlock <= text.size()) {
    std::optional<Split> split;
    if (st.escaped || block_mask(text.data() + at, '\\', 0) != 0) {
      split = split_bytes(text, at, at + kBlock, begin, want, st);
    } else {
      split = split_block(text, at, begin, want, st);
    }
    if (split) return *split;
    at += kBlock;
  }
#endif
  if (std::optional<Split> split = split_bytes(text, at, text.size(), begin, want, st)) {
    return *split;
  }
  return {st.in_string ? Stop::kEndInString : Stop::kEnd, text.size()};
}

}  // namespace plumb::step
