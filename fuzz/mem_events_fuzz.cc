// libFuzzer target: any bytes as plumb.mem-events/1 lines, then the whole analysis of what was
// read and its replay under every allocator policy. Reading must succeed or throw plumb::Error;
// the analysis and the replays must never crash or hang, and a replay must keep its invariants:
// never more held than reserved, never more reserved than the capacity.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/error.h"
#include "mem/analysis.h"
#include "mem/jsonl_reader.h"
#include "mem/replay.h"

namespace {

void replay_all(const plumb::mem::Trace& trace, const plumb::mem::Timeline& tl) {
  using namespace plumb::mem;
  for (const uint64_t capacity : {uint64_t{0}, uint64_t{64} << 20}) {
    ReplayOptions o;
    o.capacity = capacity;
    std::vector<AllocatorPolicy> policies = builtin_policies();
    policies.push_back(recorded_policy(trace));
    policies.push_back(policy_from_spec("pytorch:max_split_size_mb=24,garbage_collection_threshold=0.5"));
    for (const AllocatorPolicy& p : policies) {
      const ReplayResult r = replay(trace, p, o);
      if (r.peak_allocated > r.peak_reserved) std::abort();
      for (const uint64_t reserved : r.reserved) {
        if (capacity > 0 && reserved > capacity) std::abort();
      }
      check_against_recorded(trace, tl, r);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::mem::Trace trace = plumb::mem::parse_events_jsonl(text, "fuzz.jsonl");
    static const plumb::mem::AnalyzeOptions options;  // its regexes compiled once
    const plumb::mem::Analysis a = plumb::mem::analyze(trace, options);
    replay_all(trace, a.timeline);
  } catch (const plumb::Error&) {
    // a clear message for the user: fine
  }
  return 0;
}
