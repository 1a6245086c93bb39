// `plumb report` of a baseline set (issue 29, item 4): one self-contained page like the comm report
// (CSS inline, charts as inline SVG, no script, nothing by URL) with a section per part, in the
// order of report/set_parts.h: topology, versions, communication (the comm report's summary and
// charts, and with two sets its overlay, diff and variables), model step, memory (per-rank table
// and the checkpoint check), recovery (each failure), serving (the runs' tables and the latency
// and throughput charts of report/serve_html.h). With two records A and B, each part shows
// them side by side. A part a record lacks says so with its reason ("missing — ..."), never a
// zero. Every string from a record is escaped. See docs/report.md.
#pragma once

#include <fmt/format.h>

#include <ostream>

#include "baseline/diff.h"
#include "baseline/store.h"
#include "mem/memory_baseline.h"
#include "supervise/recovery_record.h"
#include "baseline/step_diff.h"

namespace plumb::report {

// `b` is null for a page of one set; `comm_diff` is baseline::diff(a, *b) when both hold comm
// rows, else null. Parts that do not read back (a damaged step, memory or recovery part) throw
// the reader's Error naming the record and the field.
void render_set_html(const baseline::Record& a, const baseline::Record* b,
                     const baseline::Diff* comm_diff, fmt::memory_buffer& out);
void write_set_html(const baseline::Record& a, const baseline::Record* b,
                    const baseline::Diff* comm_diff, std::ostream& out);

// The pieces, each one baseline's block of its part (tested on their own).
void append_step_block(const baseline::StepSummary& summary, fmt::memory_buffer& out);
void append_memory_block(const mem::MemoryBaseline& memory, fmt::memory_buffer& out);
void append_recovery_block(const supervise::RecoveryBaseline& recovery, fmt::memory_buffer& out);

}  // namespace plumb::report
