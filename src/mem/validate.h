// The one check every reader's trace goes through: a trace that cannot have happened is refused
// before any analysis, naming the event (and its line in plumb.mem-events/1) and what is wrong:
//   - a block freed while it is not allocated: freed twice (docs/mem.md, "What is refused"). A
//     free of an address the trace has not seen yet is legitimate: the ring buffer dropped its
//     allocation (the timeline counts it in the initial state);
//   - an allocation at an address still allocated, or still waiting for its free to complete;
//   - an allocation whose [addr, addr + size) overlaps a block still allocated;
//   - time running backwards, a negative or non-finite time;
//   - a size beyond any device (kMaxBytes), or a block that passes the end of the address space;
//   - a block of the end state's segments outside its segment.
// One linear pass: block states in an open-addressing table, live ranges in a chunked sorted
// array (no node allocation per event).
#pragma once

#include <cstdint>
#include <string>

#include "mem/trace.h"

namespace plumb::mem {

// 1 PiB: more than any device's memory by far; a larger size is a corrupt or made-up trace.
inline constexpr uint64_t kMaxBytes = uint64_t{1} << 50;

// Throws plumb::Error naming `name`: "run.jsonl:4: event 3: ..." when the trace has
// event_lines, else "x.pickle: device_traces[0][3]: ...".
void validate_trace(const Trace& trace, const std::string& name);

}  // namespace plumb::mem
