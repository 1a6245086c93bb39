// `plumb step --html`: the page of one step analysis, one self-contained file like the other
// reports (CSS inline, charts as inline SVG drawn here, no script, nothing by URL).
//
// Sections: the facts (ranks, steps, the slowest step, the whole-trace straggler, baseline, plan);
// the breakdown (a stacked horizontal bar per rank and step: compute, overlapped communication
// hatched, exposed communication, memory, idle, on one time scale); the swimlane of
// StepResult::swimlane_step (one row per rank, a track each for compute, communication and
// memory, time in ms from the step's earliest start); the stragglers; the slow collectives (the
// lowest busbw against the baseline, else the largest exposed time); the plan; the notes; the
// traces read. Every string from a trace is escaped. See docs/step.md.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <ostream>

#include "step/result.h"

namespace plumb::report {

// The most bars the breakdown draws (ranks × steps); beyond, the first steps that fit, and a note.
inline constexpr size_t kMaxStepBars = 512;
// The most rows of the slow-collective table.
inline constexpr size_t kMaxSlowCollectives = 20;

void render_step_html(const step::StepResult& result, fmt::memory_buffer& out);

// The same page written to `out` with one call.
void write_step_html(const step::StepResult& result, std::ostream& out);

}  // namespace plumb::report
