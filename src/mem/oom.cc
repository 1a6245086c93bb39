#include "mem/oom.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/units.h"

namespace plumb::mem {
namespace {

int64_t step_of(const Steps& steps, size_t event) {
  const auto it = std::upper_bound(steps.starts.begin(), steps.starts.end(), event);
  return it == steps.starts.begin() ? -1 : static_cast<int64_t>(it - steps.starts.begin()) - 1;
}

uint64_t median_bytes(std::vector<uint64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

std::string b(uint64_t bytes) { return format_bytes(bytes); }

void decide(Oom& o, const Creep& creep) {
  // A new segment can come from what the driver still has: the largest range the allocator
  // could have used is the larger of its largest free block and the driver's remainder.
  const uint64_t largest = std::max(o.largest_free_block_bytes, o.device_free_bytes);
  if (o.free_bytes >= o.requested_bytes && largest >= o.requested_bytes) {
    o.cause = "fragmentation";
    o.explanation = fmt::format(
        "{} asked and a free block of {} exists, but in another pool or stream, or above "
        "max_split_size: the allocator would not split it",
        b(o.requested_bytes), b(o.largest_free_block_bytes));
    return;
  }
  if (o.free_bytes >= o.requested_bytes) {
    o.cause = "fragmentation";
    o.explanation = fmt::format(
        "{} asked, {} free ({} cached in segments + {} on the device) but the largest free block "
        "in a segment is {}: enough bytes, no block large enough",
        b(o.requested_bytes), b(o.free_bytes), b(o.cached_free_bytes), b(o.device_free_bytes),
        b(o.largest_free_block_bytes));
    return;
  }
  o.shortfall_bytes = o.requested_bytes - o.free_bytes;
  const double rise = creep.verdict == "leak" && o.step > 0
                          ? creep.slope_bytes_per_step * static_cast<double>(o.step)
                          : 0;
  if (rise >= static_cast<double>(o.shortfall_bytes)) {
    o.cause = "creep";
    o.explanation = fmt::format(
        "{} short; the baseline rose {:.0f} bytes per step, {} by step {}: without the rise it "
        "would have fit",
        b(o.shortfall_bytes), creep.slope_bytes_per_step, b(static_cast<uint64_t>(rise)), o.step + 1);
    return;
  }
  const uint64_t now = o.allocated_bytes + o.requested_bytes;
  if (o.usual_step_peak_bytes > 0 && now >= o.usual_step_peak_bytes + o.shortfall_bytes) {
    o.cause = "spike";
    o.explanation = fmt::format(
        "{} short; this step reached {} with the request where steps usually peak at {}: a "
        "transient {} above the usual peak",
        b(o.shortfall_bytes), b(now), b(o.usual_step_peak_bytes), b(now - o.usual_step_peak_bytes));
    return;
  }
  o.cause = "true_peak";
  o.explanation = fmt::format(
      "{} short; {} live + {} asked against {} reserved + {} on the device: the step's ordinary "
      "peak does not fit",
      b(o.shortfall_bytes), b(o.allocated_bytes), b(o.requested_bytes), b(o.reserved_bytes),
      b(o.device_free_bytes));
}

}  // namespace

std::vector<Oom> classify_ooms(const Trace& t, const Timeline& tl, const Steps& steps,
                               const Creep& creep) {
  std::vector<Oom> out;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (e.action != Action::kOom) continue;
    Oom o;
    o.event = i;
    o.step = step_of(steps, i);
    o.requested_bytes = e.size;
    o.device_free_bytes = t.device_free_of(i);
    const FreeSpace f = free_space_before(t, i);
    o.cached_free_bytes = f.free;
    o.free_bytes = f.free + o.device_free_bytes;
    o.largest_free_block_bytes = f.largest_free_block;
    const Sample s = i > 0 ? tl.samples[i - 1] : tl.initial;
    o.allocated_bytes = s.allocated;
    o.reserved_bytes = s.reserved;
    if (o.step > 0) {
      const size_t before = std::min<size_t>(static_cast<size_t>(o.step), creep.step_peak.size());
      o.usual_step_peak_bytes =
          median_bytes({creep.step_peak.begin(), creep.step_peak.begin() + before});
    }
    decide(o, creep);
    out.push_back(o);
  }
  return out;
}

}  // namespace plumb::mem
