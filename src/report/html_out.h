// Writing an HTML page into a buffer: the few appenders every page (html_report, html_context,
// mem_html, plan_compare_html, precision_html, serve_html, serve_pareto_html, set_html, step_html)
// writes with. Text from a record goes through put_escaped or cell, never put.
#pragma once

#include <fmt/format.h>

#include <iterator>
#include <string_view>
#include <utility>

#include "report/html_escape.h"

namespace plumb::report {

// Markup, as is.
inline void put(fmt::memory_buffer& out, std::string_view text) { out.append(text); }

// Formatted markup; its arguments are not escaped.
template <typename... Args>
void putf(fmt::memory_buffer& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

// Text, escaped (html_escape.h).
inline void put_escaped(fmt::memory_buffer& out, std::string_view text) {
  append_escaped(out, text);
}

// One table cell of escaped text: <td>text</td>, or <td class="cls">text</td>.
inline void cell(fmt::memory_buffer& out, std::string_view text, std::string_view cls = "") {
  if (cls.empty()) {
    put(out, "<td>");
  } else {
    putf(out, "<td class=\"{}\">", cls);
  }
  put_escaped(out, text);
  put(out, "</td>");
}

}  // namespace plumb::report
