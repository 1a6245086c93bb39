// The PyTorch profiler (Kineto) reader: one rank's Chrome-trace JSON → RankTrace. The rules are
// in kineto_reader.cc's opening comment and docs/step.md ("Reading Kineto traces").
#pragma once

#include "step/readers.h"
#include "step/trace.h"
#include "step/trace_input.h"

namespace plumb::step {

// The reader on text already read (read_kineto = read_trace_text + this); for tests and fuzzing.
// Bad input throws plumb::Error naming text.source.
RankTrace kineto_from_text(const TraceText& text, const ReadOptions& options);

}  // namespace plumb::step
