#include "step/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "comm/bandwidth.h"
#include "comm/collective.h"
#include "step/classify.h"

namespace plumb::step {
namespace {

constexpr double kNsPerUs = 1000.0;
constexpr double kBytesPerGB = 1e9;
constexpr double kUsPerS = 1e6;

// A call taking part in matching: its rank's index in `traces` and its index in that rank's calls.
struct Participant {
  size_t trace = 0;
  size_t call = 0;
};

// The group key calls are matched under: the group name; when the trace does not name it, the
// stream the call ran on (each NCCL communicator has its own stream, so calls of two unnamed
// groups do not interleave), as "\x01stream N" so that no group name can collide with it.
using GroupCalls = std::map<std::string, std::vector<size_t>>;

std::vector<uint32_t> call_streams(const RankTrace& trace) {
  std::vector<uint32_t> out(trace.calls.size(), 0);
  std::vector<bool> seen(trace.calls.size(), false);
  for (const DeviceSpan& span : trace.spans) {
    if (span.call < 0 || static_cast<size_t>(span.call) >= out.size()) continue;
    size_t c = static_cast<size_t>(span.call);
    if (!seen[c]) out[c] = span.stream;
    seen[c] = true;
  }
  return out;
}

std::string group_key(const CollectiveCall& call, uint32_t stream) {
  if (!call.group.empty()) return call.group;
  return fmt::format("\x01stream {}", stream);
}

// How a note names a group key.
std::string shown_group(const std::string& key) {
  if (key.starts_with('\x01')) return fmt::format("(unnamed, on {})", key.substr(1));
  return key;
}

// Calls of one rank that start inside its step range, by group, in issue order.
GroupCalls calls_by_group(const RankTrace& trace) {
  GroupCalls out;
  if (trace.steps.empty()) return out;
  std::vector<uint32_t> streams = call_streams(trace);
  int64_t first = trace.steps.front().start_ns;
  int64_t last = trace.steps.back().end_ns;
  for (size_t c = 0; c < trace.calls.size(); ++c) {
    const CollectiveCall& call = trace.calls[c];
    if (call.start_ns < first || call.start_ns >= last) continue;
    out[group_key(call, streams[c])].push_back(c);
  }
  for (auto& [group, calls] : out) {
    std::stable_sort(calls.begin(), calls.end(), [&](size_t a, size_t b) {
      return trace.calls[a].start_ns < trace.calls[b].start_ns;
    });
  }
  return out;
}

// The step of `trace` holding `t`, else the last step starting before it.
int64_t step_at(const RankTrace& trace, int64_t t) {
  int64_t step = trace.steps.front().step;
  for (const StepSpan& span : trace.steps) {
    if (span.start_ns > t) break;
    step = span.step;
  }
  return step;
}

int group_size(const CollectiveCall& call, int world_size, size_t present) {
  if (!call.group_ranks.empty()) return static_cast<int>(call.group_ranks.size());
  if (world_size > 0) return world_size;
  return static_cast<int>(present);
}

CollectiveInstance make_instance(const std::vector<RankTrace>& traces,
                                 const std::vector<std::vector<int64_t>>& exposed_ns,
                                 const std::vector<Participant>& parts, int world_size) {
  auto start_of = [&](const Participant& p) { return traces[p.trace].calls[p.call].start_ns; };
  auto [first, last] = std::minmax_element(parts.begin(), parts.end(),
                                           [&](const Participant& a, const Participant& b) {
                                             return start_of(a) < start_of(b);
                                           });
  const CollectiveCall& last_call = traces[last->trace].calls[last->call];
  CollectiveInstance out;
  out.kind = last_call.kind;
  out.group = last_call.group;
  out.group_ranks = last_call.group_ranks;
  out.ranks_seen = static_cast<int>(parts.size());
  out.name = last_call.name;
  out.first_rank = traces[first->trace].rank;
  out.last_rank = traces[last->trace].rank;
  out.last_start_ns = last_call.start_ns;
  out.step = step_at(traces[last->trace], last_call.start_ns);
  out.start_skew_us = static_cast<double>(last_call.start_ns - start_of(*first)) / kNsPerUs;
  double exposed = 0;
  for (const Participant& p : parts) {
    const CollectiveCall& call = traces[p.trace].calls[p.call];
    out.bytes = std::max(out.bytes, call.bytes);
    out.waited_us += static_cast<double>(last_call.start_ns - call.start_ns) / kNsPerUs;
    exposed += static_cast<double>(exposed_ns[p.trace][p.call]) / kNsPerUs;
  }
  out.exposed_us = exposed / static_cast<double>(parts.size());
  out.duration_us = static_cast<double>(last_call.end_ns - last_call.start_ns) / kNsPerUs;
  out.busbw_gbps = instance_busbw_gbps(out.kind, out.bytes, out.duration_us,
                                       group_size(last_call, world_size, traces.size()));
  return out;
}

// The traces (indices) that take part in a group: those of its ranks, or all.
std::vector<size_t> members(const std::vector<RankTrace>& traces, const std::string& group,
                            const std::vector<GroupCalls>& by_rank) {
  std::vector<size_t> out;
  for (size_t t = 0; t < traces.size(); ++t) {
    if (by_rank[t].contains(group)) out.push_back(t);
  }
  return out;
}

// One group's calls of one kind on each member rank, in issue order.
struct KindCalls {
  std::vector<size_t> traces;                  // indices into the set
  std::vector<std::vector<size_t>> calls;      // per member, call indices
};

KindCalls calls_of_kind(const std::vector<RankTrace>& traces,
                        const std::vector<GroupCalls>& by_rank, const std::string& group,
                        CollectiveKind kind) {
  KindCalls out;
  for (size_t t : members(traces, group, by_rank)) {
    std::vector<size_t> calls;
    for (size_t c : by_rank[t].at(group)) {
      if (traces[t].calls[c].kind == kind) calls.push_back(c);
    }
    if (calls.empty()) continue;
    out.traces.push_back(t);
    out.calls.push_back(std::move(calls));
  }
  return out;
}

// A rank whose profile window opened earlier holds calls the others never recorded: leading calls
// that end before some member's first call starts cannot be the same instance (every rank of an
// instance is inside it when the last one arrives). Drops them; returns how many.
size_t drop_unmatched_leading(const std::vector<RankTrace>& traces, KindCalls& k) {
  size_t dropped = 0;
  for (bool changed = true; changed;) {
    changed = false;
    int64_t latest_first = std::numeric_limits<int64_t>::min();
    for (size_t m = 0; m < k.traces.size(); ++m) {
      if (k.calls[m].empty()) return dropped;
      latest_first = std::max(latest_first, traces[k.traces[m]].calls[k.calls[m].front()].start_ns);
    }
    for (size_t m = 0; m < k.traces.size(); ++m) {
      const CollectiveCall& first = traces[k.traces[m]].calls[k.calls[m].front()];
      if (first.end_ns >= latest_first) continue;
      k.calls[m].erase(k.calls[m].begin());
      ++dropped;
      changed = true;
    }
  }
  return dropped;
}

// The n-th calls of the members, and whether they overlap in time as one instance must.
std::vector<Participant> nth_calls(const std::vector<RankTrace>& traces, const KindCalls& k,
                                   size_t n, bool& overlap) {
  std::vector<Participant> parts;
  int64_t latest_start = std::numeric_limits<int64_t>::min();
  int64_t earliest_end = std::numeric_limits<int64_t>::max();
  for (size_t m = 0; m < k.traces.size(); ++m) {
    if (n >= k.calls[m].size()) continue;
    parts.push_back({k.traces[m], k.calls[m][n]});
    const CollectiveCall& call = traces[k.traces[m]].calls[k.calls[m][n]];
    latest_start = std::max(latest_start, call.start_ns);
    earliest_end = std::min(earliest_end, call.end_ns);
  }
  overlap = latest_start <= earliest_end;
  return parts;
}

void match_kind(const std::vector<RankTrace>& traces,
                const std::vector<std::vector<int64_t>>& exposed_ns, KindCalls k,
                const std::string& group, CollectiveKind kind, int world_size,
                std::vector<CollectiveInstance>& out, std::vector<std::string>& notes) {
  size_t dropped = k.traces.size() > 1 ? drop_unmatched_leading(traces, k) : 0;
  if (dropped > 0) {
    notes.push_back(fmt::format(
        "group {}: {} leading {} call(s) end before another rank's first one starts (profile "
        "windows opened at different times): left unmatched",
        shown_group(group), dropped, kind_name(kind)));
  }
  size_t longest = 0;
  for (const std::vector<size_t>& calls : k.calls) longest = std::max(longest, calls.size());
  for (size_t n = 0; n < longest; ++n) {
    bool overlap = true;
    std::vector<Participant> parts = nth_calls(traces, k, n, overlap);
    if (!overlap) {
      notes.push_back(fmt::format(
          "group {}: {} call {} does not overlap in time across the ranks, as one instance "
          "must: the ranks' calls do not line up from there (calls missing from some traces?); "
          "{} instance(s) matched",
          shown_group(group), kind_name(kind), n + 1, n));
      return;
    }
    out.push_back(make_instance(traces, exposed_ns, parts, world_size));
  }
}

// A group's calls, matched kind by kind in call order.
void match_group(const std::vector<RankTrace>& traces,
                 const std::vector<std::vector<int64_t>>& exposed_ns,
                 const std::vector<GroupCalls>& by_rank, const std::string& group, int world_size,
                 std::vector<CollectiveInstance>& out, std::vector<std::string>& notes) {
  std::set<CollectiveKind> kinds;
  for (size_t t : members(traces, group, by_rank)) {
    for (size_t c : by_rank[t].at(group)) kinds.insert(traces[t].calls[c].kind);
  }
  for (CollectiveKind kind : kinds) {
    match_kind(traces, exposed_ns, calls_of_kind(traces, by_rank, group, kind), group, kind,
               world_size, out, notes);
  }
}

}  // namespace

double instance_busbw_gbps(CollectiveKind kind, uint64_t bytes, double duration_us, int nranks) {
  if (bytes == 0 || duration_us <= 0 || nranks < 1) return kNaN;
  if (kind == CollectiveKind::kUnknown || kind == CollectiveKind::kBarrier) return kNaN;
  double algbw = static_cast<double>(bytes) / kBytesPerGB / (duration_us / kUsPerS);
  double factor = comm::find_collective(kind_name(kind)).bus_factor(nranks);
  return comm::busbw_gbps(algbw, factor);
}

std::vector<CollectiveInstance> match_collectives(const std::vector<RankTrace>& traces,
                                                  const std::vector<std::vector<int64_t>>& exposed_ns,
                                                  int world_size, std::vector<std::string>& notes) {
  std::vector<GroupCalls> by_rank;
  std::map<std::string, int> groups;
  for (const RankTrace& trace : traces) {
    by_rank.push_back(calls_by_group(trace));
    for (const auto& entry : by_rank.back()) groups[entry.first] += 1;
  }
  std::vector<CollectiveInstance> out;
  for (const auto& entry : groups) {
    match_group(traces, exposed_ns, by_rank, entry.first, world_size, out, notes);
  }
  std::stable_sort(out.begin(), out.end(), [](const CollectiveInstance& a,
                                              const CollectiveInstance& b) {
    return std::pair(a.step, a.last_start_ns) < std::pair(b.step, b.last_start_ns);
  });
  return out;
}

std::vector<Straggler> find_stragglers(const std::vector<CollectiveInstance>& instances) {
  std::map<int64_t, std::map<int, double>> per_step;
  std::map<int, double> overall;
  for (const CollectiveInstance& c : instances) {
    if (c.ranks_seen < 2 || c.waited_us <= 0) continue;
    per_step[c.step][c.last_rank] += c.waited_us;
    overall[c.last_rank] += c.waited_us;
  }
  auto top = [](int64_t step, const std::map<int, double>& waits, size_t limit,
                std::vector<Straggler>& out) {
    std::vector<Straggler> list;
    for (const auto& [rank, waited] : waits) list.push_back({step, rank, waited});
    std::stable_sort(list.begin(), list.end(), [](const Straggler& a, const Straggler& b) {
      return a.waited_on_us > b.waited_on_us;
    });
    if (list.size() > limit) list.resize(limit);
    out.insert(out.end(), list.begin(), list.end());
  };
  std::vector<Straggler> out;
  for (const auto& [step, waits] : per_step) top(step, waits, kStragglersPerStep, out);
  top(-1, overall, kStragglersOverall, out);
  return out;
}

}  // namespace plumb::step
