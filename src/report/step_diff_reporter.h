// Step records on a terminal: `plumb diff` of two of them (the figures A and B with their change,
// noise and verdict; busbw per collective kind; the straggler; the context; one verdict line), and
// the `plumb show` summary of one.
#pragma once

#include <ostream>

#include "baseline/step_diff.h"
#include "baseline/store.h"

namespace plumb::report {

void print_step_diff(const baseline::StepDiff& diff, std::ostream& out);

// `record` holds a step record; `summary` is baseline::summarize_step of it.
void print_step_record(const baseline::Record& record, const baseline::StepSummary& summary,
                       std::ostream& out);
// Its body without the record's header and footer lines (a baseline set's model step section).
void print_step_summary(const baseline::StepSummary& summary, std::ostream& out);

}  // namespace plumb::report
