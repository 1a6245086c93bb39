// HTML escaping for the HTML report: every string that comes from a record (labels, host names,
// variables, versions) goes through here before it reaches the page.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace plumb::report {

// Appends `text` with & < > " ' replaced by entities: safe in element text and in quoted
// attribute values alike.
void append_escaped(fmt::memory_buffer& out, std::string_view text);

std::string html_escape(std::string_view text);

}  // namespace plumb::report
