#include "step/json_text.h"

namespace plumb::step {

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
  for (size_t at = open + 1; at < text.size(); ++at) {
    if (text[at] == '\\') {
      ++at;
    } else if (text[at] == '"') {
      return at;
    }
  }
  return kNotFound;
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

Split split_array(std::string_view text, size_t begin, size_t want) {
  int depth = 0;  // inside the array, between elements
  for (size_t at = begin; at < text.size(); ++at) {
    switch (text[at]) {
      case '"':
        at = string_end(text, at);
        if (at == kNotFound) return {Stop::kEndInString, text.size()};
        break;
      case '{':
      case '[': ++depth; break;
      case '}':
      case ']':
        if (depth == 0) return {text[at] == ']' ? Stop::kArrayEnd : Stop::kMalformed, at};
        if (--depth == 0 && at + 1 - begin >= want) return {Stop::kCut, at + 1};
        break;
      default: break;
    }
  }
  return {Stop::kEnd, text.size()};
}

}  // namespace plumb::step
