// Checks that a set of rank traces belongs to one run before anything is compared across them
// (docs/step.md, "Bad input"): every problem in one message, plumb::Error, exit 2.
#pragma once

#include <string>
#include <vector>

#include "step/trace.h"

namespace plumb::step {

// Sorts `traces` by rank and checks: each has a rank and at least one step (else "no steps
// found", naming the file and the step pattern), no rank twice, world sizes agree and hold every
// rank, step numbers agree. Returns the world size (-1 when no trace says) and adds a note when
// the set holds only some of the ranks, and one per rank and kind of damaged device event its
// reader dropped (RankTrace::dropped: how many, in which steps, of how many events there;
// docs/step.md, "Damaged input").
int check_trace_set(std::vector<RankTrace>& traces, const std::string& step_regex,
                    std::vector<std::string>& notes);

}  // namespace plumb::step
