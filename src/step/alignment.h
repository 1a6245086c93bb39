// Lining up one process group's collective calls across its ranks, instance by instance
// (docs/step.md, "Matching"): by the calls' sequence numbers where the trace has them, else by
// issue order. An instance whose calls do not overlap in time, as one instance's calls must, does
// not stop the matching: the ranks' clock offsets are re-estimated from the instances around it,
// or the call missing on one rank is found, and matching goes on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "step/trace.h"

namespace plumb::step {

// A group's calls to match: for each member rank present in the set (its index in the trace
// set), its call indices in the order they are matched.
struct GroupSequence {
  std::string label;                       // "group 0: allreduce", for notes
  std::vector<size_t> traces;              // per member: index into the trace set
  std::vector<std::vector<size_t>> calls;  // per member: call indices
};

// One member's call in a matched instance, and the offset subtracted from that rank's times to
// put it on the group's common clock (0 until a re-synchronisation estimates one).
struct AlignedCall {
  size_t trace = 0;
  size_t call = 0;
  int64_t offset_ns = 0;
};

// What matching one group found. instances = matched + partial + unaligned.
struct AlignmentCounts {
  int64_t matched = 0;    // every member's call, lined up
  int64_t partial = 0;    // lined up, but recorded by only some members (profile windows)
  int64_t unaligned = 0;  // calls that line up with no counterpart: left out
  int64_t resyncs = 0;    // re-synchronisations (clock offsets re-estimated, a missing call found)
};

struct Alignment {
  std::vector<std::vector<AlignedCall>> instances;  // matched and partial, in match order
  AlignmentCounts counts;
  size_t leading = 0;  // leading calls matched only among the ranks that have them
  std::vector<std::string> notes;
};

// How many instances a re-synchronisation is judged on: each candidate alignment (clock offsets
// kept, offsets re-estimated, one rank's call left out, one rank's call missing) is scored by how
// many of the next kResyncWindow instances line up under it. One other than keeping the clocks
// needs at least 2 of them, and more than half of those with two calls or more.
inline constexpr size_t kResyncWindow = 16;

// The step of `trace` holding `t`, else the last step starting before it.
int64_t step_at(const RankTrace& trace, int64_t t);

// By issue order: the n-th call of each member meets the n-th of the others. `leading[m]` calls
// of member m end before another member's first call starts: either its profile window opened
// earlier (they are matched among the members that have them, aligned on the first instance
// every member recorded) or the ranks' clocks differ (the first calls are one instance and the
// offsets are estimated): whichever lines up more of the first kResyncWindow instances, the
// window on ties or when the clocks' case is not convincing (kResyncWindow).
Alignment align_by_order(const std::vector<RankTrace>& traces, const GroupSequence& group,
                         const std::vector<size_t>& leading);

// By sequence number: calls with the same `seq` (and, for a number met twice on one rank, the
// same occurrence) are one instance. Instances are taken in sequence order.
Alignment align_by_seq(const std::vector<RankTrace>& traces, const GroupSequence& group);

}  // namespace plumb::step
