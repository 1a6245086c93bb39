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
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "mem/trace.h"

namespace plumb::mem {

// 1 PiB: more than any device's memory by far; a larger size is a corrupt or made-up trace.
inline constexpr uint64_t kMaxBytes = uint64_t{1} << 50;

// Throws plumb::Error naming `name`: "run.jsonl:4: event 3: ..." when the trace has
// event_lines, else "x.pickle: device_traces[0][3]: ...".
void validate_trace(const Trace& trace, const std::string& name);

// validate_trace on a thread of its own while a reader appends the events to `trace` (a snapshot
// of millions of events: the check then costs the reader nothing). The reader reserves the
// events' capacity first, calls publish() now and then after appending (and after the matching
// Trace::device_free entries), abandon() before an append that would reallocate the events,
// and finish() where it would call validate_trace: the same checks, in the same order, the same
// message. It speculates that the trace has free_completed events, as PyTorch's do; where it
// turns out to have none, or was abandoned, finish() runs validate_trace itself.
class StreamValidator {
 public:
  // `device`: the trace's device for messages (trace.device may be set only later).
  StreamValidator(const Trace& trace, const std::string& name, int device);
  ~StreamValidator();  // stops the thread: what it found is dropped
  StreamValidator(const StreamValidator&) = delete;
  StreamValidator& operator=(const StreamValidator&) = delete;

  void publish();
  void abandon();
  // Throws plumb::Error as validate_trace(trace, name) would.
  void finish();

 private:
  struct Shared;
  void run();
  void stop();

  const Trace& trace_;
  const std::string& name_;
  int device_;
  std::unique_ptr<Shared> shared_;
  size_t handed_free_ = 0;  // Trace::device_free entries handed over
  bool abandoned_ = false;
  // Written by the thread, read once it has ended.
  std::optional<std::string> error_;
  bool failed_ = false;
  bool saw_completions_ = false;
  std::thread thread_;
};

}  // namespace plumb::mem
