// `plumb plan compare --html`: the comparison of chips as one self-contained page, in the style of
// the other HTML reports (CSS inline, charts as inline SVG drawn here, no script, nothing by URL).
//
// Sections: the header (model, tokens, how each chip's device counts were chosen, PUE, failure
// rate); the table of every chip at every count (the best of each column among rows of the same
// budget tier, or the same device count, highlighted); three charts of time to train against
// rent, purchase and energy, one line per chip through its counts; the prices with their dates
// and files; the notes.
#pragma once

#include <fmt/format.h>

#include <string>

#include "plan/compare.h"

namespace plumb::report {

void render_compare_html(const plan::Comparison& c, fmt::memory_buffer& out);
std::string compare_html(const plan::Comparison& c);

}  // namespace plumb::report
