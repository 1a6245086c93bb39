// Ranks whose trace times count from their own profiler's start (RankTrace::own_clock: PyTorch's
// legacy profiler, as Debian 12's CPU-only 1.13 writes) are put on one clock before anything is
// compared across ranks (docs/step.md, "Clocks").
#pragma once

#include <string>
#include <vector>

#include "step/trace.h"

namespace plumb::step {

// Shifts every time of each own-clock trace (steps, spans, calls, dropped events) onto the clock
// of the reference: the first trace on a common clock, else the first trace (the set sorted by
// rank). The shift is the median, over the collective calls inside both ranks' steps paired by
// order, of how far the rank's call ends from the reference's (a collective ends at nearly the
// same moment on every rank). One note per trace shifted, or per trace that could not be (no
// collectives in its steps). Times that cannot be shifted within int64 ns throw plumb::Error
// naming the file (exit 2).
void line_up_own_clocks(std::vector<RankTrace>& traces, std::vector<std::string>& notes);

}  // namespace plumb::step
