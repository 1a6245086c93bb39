// plumb's own allocator-event format, for frameworks that are not PyTorch: JSON Lines, one object
// per line (docs/mem.md, "plumb.mem-events/1"):
//   {"action": "alloc", "addr": 4096, "size": 2097152, "stream": 0, "time_us": 12.5,
//    "frames": [{"name": "forward", "filename": "model.py", "line": 10}]}
//   {"action": "step"}                        a step begins at the next event
//   {"action": "oom", "size": 1073741824, "device_free": 524288000}
//   {"segment": {"address": 0, "total_size": 20971520, "stream": 0,
//                "blocks": [{"address": 0, "size": 2097152, "state": "active_allocated"}]}}
// Actions are the PyTorch trace's (alloc, free_requested, free_completed, segment_alloc, ...).
// Blank lines and lines starting with '#' are skipped.
#pragma once

#include <string>
#include <string_view>

#include "mem/trace.h"

namespace plumb::mem {

// Every problem names `name` and the line: "run.jsonl:12: 'size' must be a non-negative integer".
Trace parse_events_jsonl(std::string_view text, const std::string& name);
Trace read_events_jsonl(const std::string& path);

// The action for its trace name, or false: shared by every reader.
bool action_from_name(std::string_view name, Action& out);

}  // namespace plumb::mem
