#include "report/html_escape.h"

namespace plumb::report {
namespace {

std::string_view entity(char c) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&quot;";
    case '\'':
      return "&#39;";
    default:
      return {};
  }
}

}  // namespace

void append_escaped(fmt::memory_buffer& out, std::string_view text) {
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string_view e = entity(text[i]);
    if (e.empty()) continue;
    out.append(text.data() + start, text.data() + i);
    out.append(e.data(), e.data() + e.size());
    start = i + 1;
  }
  out.append(text.data() + start, text.data() + text.size());
}

std::string html_escape(std::string_view text) {
  fmt::memory_buffer out;
  append_escaped(out, text);
  return fmt::to_string(out);
}

}  // namespace plumb::report
