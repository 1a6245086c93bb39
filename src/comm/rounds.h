// Rounds: the whole sweep measured several times with fresh buffers, so that a record carries the
// spread its own repetitions showed — what `plumb diff` needs to tell a regression from noise.
#pragma once

#include <vector>

#include "comm/result.h"

namespace plumb::comm {

// Rows of every round (any order) -> one row per (layer, group, collective, requested size), in
// order of first appearance: the round with the median busbw (the lower middle one for an even
// count), busbw_spread = the rounds' median absolute deviation from it, relative to it (the upper
// middle deviation for an even count), and wrong = the sum over the rounds (-1 when no round
// checked). A key measured once keeps busbw_spread NaN.
std::vector<Row> combine_rounds(const std::vector<Row>& rows);

}  // namespace plumb::comm
