#include "mem/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <exception>
#include <future>

#include "common/strings.h"
#include "mem/address_map.h"
#include "mem/allocator_model.h"
#include "mem/timeline.h"

namespace plumb::mem {
namespace {

bool has_action(const Trace& t, Action a) {
  return std::any_of(t.events.begin(), t.events.end(), [a](const Event& e) { return e.action == a; });
}

// What a replay needs to know of the trace before it starts, in one pass; read only by the
// replays, so replay_all's threads share one.
struct Recorded {
  // The trace's own segment allocations, (size, address) in order: the replay gives matching
  // segments the same addresses, so best-fit ties break as they did.
  std::vector<std::pair<uint64_t, uint64_t>> segments;
  AddressSet workspace;  // torch_npu's workspace blocks: reserved only
  uint64_t workspace_bytes = 0;
  bool frees_complete = false;  // free_completed entries: frees wait for them
  uint64_t pad = 0;  // the pad the recording allocator added to the oom's size
};

Recorded scan(const Trace& t) {
  Recorded r;
  for (const Event& e : t.events) {
    if (e.action == Action::kSegmentAlloc) r.segments.emplace_back(e.size, e.addr);
    if (e.action == Action::kFreeCompleted) r.frees_complete = true;
    if (e.action == Action::kWorkspaceSnapshot) {
      r.workspace.insert(e.addr);
      r.workspace_bytes += e.size;
    }
  }
  r.pad = policy_from_spec(r.workspace.empty() ? "pytorch" : "torch_npu").pad;  // recorded_policy's
  return r;
}

// Settings as snapshots store them: numbers and Python booleans as text.
void apply_setting(AllocatorPolicy& p, const std::string& key, const std::string& value) {
  int64_t n = 0;
  const bool integer =
      std::from_chars(value.data(), value.data() + value.size(), n).ec == std::errc();
  if (key == "max_split_size" && integer && n > 0) p.max_split_size = static_cast<uint64_t>(n);
  if (key == "expandable_segments") p.expandable_segments = value == "true" || value == "True";
  // garbage_collection_threshold acts only under a memory fraction, which snapshots do not
  // record: it is left off here (docs/mem-replay.md).
  if (key == "roundup_power2_divisions" && integer && n > 1) {
    p.roundup_power2_divisions = static_cast<unsigned>(n);
  }
}

// PYTORCH_CUDA_ALLOC_CONF: "key:value,key:value" (a per-size list for roundup is not modelled).
void apply_alloc_conf(AllocatorPolicy& p, const std::string& conf) {
  for (const std::string& item : split_list(conf, ',')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = item.substr(0, colon), value = item.substr(colon + 1);
    if (key == "max_split_size_mb") {
      int64_t mb = 0;
      if (std::from_chars(value.data(), value.data() + value.size(), mb).ec == std::errc() && mb > 0) {
        p.max_split_size = static_cast<uint64_t>(mb) << 20;
      }
    } else {
      apply_setting(p, key, value);
    }
  }
}

struct Replayer {
  const Trace& trace;
  const AllocatorPolicy& policy;
  AllocatorModel model;
  ReplayResult r;
  const Recorded& recorded;
  uint64_t workspace = 0;
  uint64_t peak_active = 0;
  AddressMap<AllocatorModel::BlockId> live;
  // Freed, waiting for free_completed: the id and its generation (a cache flush may have
  // completed and merged the block, and its id been reused since).
  AddressMap<std::pair<AllocatorModel::BlockId, uint32_t>> waiting;
  bool series = true;  // keep r.reserved

  Replayer(const Trace& t, const Recorded& rec, const AllocatorPolicy& p, uint64_t capacity,
           bool keep_series)
      : trace(t), policy(p), model(p, capacity, rec.segments), recorded(rec), series(keep_series) {
    r.policy = p.name;
    r.description = p.description;
    r.capacity = capacity == kUnlimited ? 0 : capacity;
    if (series) r.reserved.reserve(t.events.size());
  }

  void fail(size_t i, uint64_t bytes) {
    if (r.ran_out) return;
    r.ran_out = true;
    r.first_failure_event = i;
    r.first_failure_bytes = bytes;
  }

  void alloc(size_t i, const Event& e) {
    if (recorded.workspace.contains(e.addr)) return;  // torch_npu's workspace: reserved only
    ++r.allocations;
    const AllocatorModel::BlockId b = model.allocate(e.size, trace.stream_of(e));
    if (b == AllocatorModel::kNoBlock) return fail(i, e.size);
    live[e.addr] = b;
  }

  void free_requested(const Event& e) {
    AllocatorModel::BlockId id = 0;
    if (!live.take(e.addr, id)) return;  // allocated before the trace began, or failed in the replay
    model.free(id, recorded.frees_complete);
    if (recorded.frees_complete) waiting[e.addr] = {id, model.generation(id)};
  }

  void free_completed(const Event& e) {
    std::pair<AllocatorModel::BlockId, uint32_t> waited;
    if (!waiting.take(e.addr, waited)) return;
    const auto [id, generation] = waited;
    if (model.generation(id) == generation) model.complete(id);
  }

  // The request that failed when the trace was recorded: would this policy have served it?
  // The entry holds the size the recording allocator rounded (round_size, its pad included).
  void oom(size_t i, const Event& e) {
    const AllocatorModel::BlockId b =
        model.allocate(e.size - std::min(e.size, recorded.pad), trace.stream_of(e));
    if (b == AllocatorModel::kNoBlock) return fail(i, e.size);
    r.served_recorded_oom = true;
    model.free(b, false);
  }

  void step(size_t i, const Event& e) {
    switch (e.action) {
      case Action::kAlloc: alloc(i, e); break;
      case Action::kFreeRequested: free_requested(e); break;
      case Action::kFreeCompleted: free_completed(e); break;
      case Action::kOom: oom(i, e); break;
      case Action::kWorkspaceSnapshot: workspace += e.size; break;
      default: break;  // the trace's segment events are the recorded policy's, not this one's
    }
    const ModelCounters& c = model.counters();
    const uint64_t reserved = c.reserved + workspace;
    if (series) r.reserved.push_back(reserved);
    r.peak_allocated = std::max(r.peak_allocated, c.allocated);
    peak_active = std::max(peak_active, c.active);
    if (reserved > r.peak_reserved) {
      r.peak_reserved = reserved;
      const auto [free, largest] = model.free_space();
      r.free_at_peak = free;
      r.largest_free_at_peak = largest;
    }
  }

  ReplayResult finish() {
    const ModelCounters& c = model.counters();
    r.final_reserved = c.reserved + workspace;
    r.segment_allocs = c.segment_allocs;
    r.segment_frees = c.segment_frees;
    r.cache_flushes = c.cache_flushes;
    r.fragmentation = r.peak_reserved == 0
                          ? 0
                          : 1 - static_cast<double>(peak_active) / static_cast<double>(r.peak_reserved);
    return std::move(r);
  }
};

ReplayResult replay_scanned(const Trace& t, const Recorded& recorded, const AllocatorPolicy& p,
                            uint64_t capacity_option, bool series) {
  // The workspace (torch_npu) is outside the model: it takes its share of the capacity first.
  uint64_t capacity = kUnlimited;
  if (capacity_option > 0) {
    capacity = capacity_option - std::min(capacity_option, recorded.workspace_bytes);
  }
  Replayer r(t, recorded, p, capacity, series);
  for (size_t i = 0; i < t.events.size(); ++i) r.step(i, t.events[i]);
  ReplayResult out = r.finish();
  out.capacity = capacity_option;
  return out;
}

}  // namespace

AllocatorPolicy recorded_policy(const Trace& t) {
  const bool npu = has_action(t, Action::kWorkspaceSnapshot);
  AllocatorPolicy p = policy_from_spec(npu ? "torch_npu" : "pytorch");
  for (const auto& [key, value] : t.allocator_settings) apply_setting(p, key, value);
  const auto conf = t.allocator_settings.find("PYTORCH_CUDA_ALLOC_CONF");
  if (conf != t.allocator_settings.end()) apply_alloc_conf(p, conf->second);
  p.name = "as recorded";
  p.description = (npu ? std::string("torch_npu") : std::string("PyTorch")) +
                  " with the trace's allocator_settings";
  return p;
}

uint64_t capacity_from_trace(const Trace& t, const TraceStart& start) {
  uint64_t reserved = start.initial.reserved;
  for (size_t i = 0; i < t.events.size(); ++i) {
    reserved = reserved_after(t.events[i], reserved);
    if (t.events[i].action == Action::kOom) return reserved + t.device_free_of(i);
  }
  return 0;
}

ReplayResult replay(const Trace& t, const AllocatorPolicy& p, const ReplayOptions& o) {
  return replay_scanned(t, scan(t), p, o.capacity, o.series > 0);
}

namespace {

// For each policy, the first policy of the list with the same settings (itself when none before).
std::vector<size_t> first_alike(const std::vector<AllocatorPolicy>& policies) {
  std::vector<size_t> first(policies.size());
  for (size_t i = 0; i < policies.size(); ++i) {
    first[i] = i;
    for (size_t j = 0; j < i; ++j) {
      if (policies[j].settings() == policies[i].settings()) {
        first[i] = j;
        break;
      }
    }
  }
  return first;
}

// A policy's result from an alike one's: the same figures under its own name. The series is
// copied only when kept (8 bytes an event: 254 MB for a 2 GB snapshot).
ReplayResult renamed(ReplayResult& from, const AllocatorPolicy& p, bool series) {
  std::vector<uint64_t> reserved = std::move(from.reserved);
  ReplayResult r = from;
  from.reserved = std::move(reserved);
  if (series) r.reserved = from.reserved;
  r.policy = p.name;
  r.description = p.description;
  return r;
}

}  // namespace

std::vector<ReplayResult> replay_all(const Trace& t, const std::vector<AllocatorPolicy>& policies,
                                     const ReplayOptions& o) {
  const Recorded recorded = scan(t);
  std::vector<ReplayResult> out(policies.size());
  const std::vector<size_t> first = first_alike(policies);
  std::vector<size_t> distinct;
  for (size_t i = 0; i < policies.size(); ++i) {
    if (first[i] == i) distinct.push_back(i);
  }
  // Each thread takes the next policy not yet taken: the policies differ in cost (torch_npu's
  // pad splits more blocks), so a fixed half each would leave one thread waiting.
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (size_t k = next++; k < distinct.size() && !failed; k = next++) {
      const size_t i = distinct[k];
      try {
        out[i] = replay_scanned(t, recorded, policies[i], o.capacity, i < o.series);
      } catch (...) {
        failed = true;
        throw;
      }
    }
  };
  const size_t threads = std::clamp<size_t>(o.threads, 1, std::max<size_t>(distinct.size(), 1));
  std::vector<std::future<void>> helpers;
  for (size_t k = 1; k < threads; ++k) helpers.push_back(std::async(std::launch::async, work));
  std::exception_ptr error;
  try {
    work();
  } catch (...) {
    error = std::current_exception();
  }
  for (auto& h : helpers) {
    try {
      h.get();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  for (size_t i = 0; i < policies.size(); ++i) {
    if (first[i] != i) out[i] = renamed(out[first[i]], policies[i], i < o.series);
  }
  return out;
}

ReserveCheck check_against_recorded(const Trace& t, const TraceStart& start, const ReplayResult& r) {
  ReserveCheck c;
  if (start.initial.reserved != 0 || start.initial.allocated != 0 || start.dropped_frees != 0) {
    c.why_not = "the trace's ring buffer dropped its beginning: the replay cannot start from the "
                "state the allocator had";
    return c;
  }
  if (!has_action(t, Action::kSegmentAlloc) && !has_action(t, Action::kSegmentMap)) {
    c.why_not = "the trace records no segment events";
    return c;
  }
  c.comparable = true;
  uint64_t recorded = 0;  // start.initial.reserved, 0 here
  for (size_t i = 0; i < t.events.size() && i < r.reserved.size(); ++i) {
    recorded = reserved_after(t.events[i], recorded);
    const Action a = t.events[i].action;
    if (a != Action::kAlloc && a != Action::kFreeRequested && a != Action::kFreeCompleted &&
        a != Action::kOom) {
      continue;  // mid-way through the recorded allocator's own segment calls
    }
    ++c.events_compared;
    if (recorded == r.reserved[i]) continue;
    if (c.mismatches++ == 0) {
      c.first_mismatch = i;
      c.recorded_at_mismatch = recorded;
      c.replayed_at_mismatch = r.reserved[i];
    }
  }
  return c;
}

}  // namespace plumb::mem
