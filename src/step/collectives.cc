#include "step/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "comm/bandwidth.h"
#include "comm/collective.h"
#include "step/alignment.h"
#include "step/classify.h"

namespace plumb::step {
namespace {

// The group key calls are matched under: the group name; when the trace does not name it, the
// stream the call ran on (each NCCL communicator has its own stream, so calls of two unnamed
// groups do not interleave), as "\x01stream N" so that no group name can collide with it.
using CallsByGroup = std::map<std::string, std::vector<size_t>>;

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
CallsByGroup calls_by_group(const RankTrace& trace) {
  CallsByGroup out;
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

int group_size(const CollectiveCall& call, int world_size, size_t present) {
  if (!call.group_ranks.empty()) return static_cast<int>(call.group_ranks.size());
  if (world_size > 0) return world_size;
  return static_cast<int>(present);
}

// One instance from its calls; start times are compared on the group's common clock (each
// call's rank offset subtracted), the step and swimlane time stay on the last rank's own clock.
CollectiveInstance make_instance(const std::vector<RankTrace>& traces,
                                 const std::vector<std::vector<int64_t>>& exposed_ns,
                                 const std::vector<AlignedCall>& parts, int world_size) {
  auto call_of = [&](const AlignedCall& p) -> const CollectiveCall& {
    return traces[p.trace].calls[p.call];
  };
  auto start_of = [&](const AlignedCall& p) { return call_of(p).start_ns - p.offset_ns; };
  auto [first, last] = std::minmax_element(
      parts.begin(), parts.end(),
      [&](const AlignedCall& a, const AlignedCall& b) { return start_of(a) < start_of(b); });
  const CollectiveCall& last_call = call_of(*last);
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
  out.start_skew_us = static_cast<double>(start_of(*last) - start_of(*first)) / kNsPerUs;
  double exposed = 0;
  for (const AlignedCall& p : parts) {
    out.bytes = std::max(out.bytes, call_of(p).bytes);
    out.waited_us += static_cast<double>(start_of(*last) - start_of(p)) / kNsPerUs;
    exposed += static_cast<double>(exposed_ns[p.trace][p.call]) / kNsPerUs;
  }
  out.exposed_us = exposed / static_cast<double>(parts.size());
  out.duration_us = static_cast<double>(last_call.end_ns - last_call.start_ns) / kNsPerUs;
  out.busbw_gbps = instance_busbw_gbps(out.kind, out.bytes, out.duration_us,
                                       group_size(last_call, world_size, traces.size()));
  return out;
}

// The calls of `group` that `keep` accepts, in issue order, on every rank that holds any call of
// the group (a rank without such a call makes the instances partial).
template <typename Keep>
GroupSequence sequence_of(const std::vector<CallsByGroup>& by_rank, const std::string& group,
                          std::string label, const std::vector<RankTrace>& traces, Keep keep) {
  GroupSequence out;
  out.label = std::move(label);
  for (size_t t = 0; t < traces.size(); ++t) {
    auto found = by_rank[t].find(group);
    if (found == by_rank[t].end()) continue;
    std::vector<size_t> calls;  // may stay empty: the rank is a member that recorded none
    for (size_t c : found->second) {
      if (keep(traces[t].calls[c])) calls.push_back(c);
    }
    out.traces.push_back(t);
    out.calls.push_back(std::move(calls));
  }
  return out;
}

// A rank whose profile window opened earlier holds calls the others never recorded: leading
// calls that end before some member's first call starts cannot be an instance every member
// recorded (every rank of an instance is inside it when the last one arrives). How many each
// member has.
std::vector<size_t> leading_calls(const std::vector<RankTrace>& traces, const GroupSequence& g) {
  std::vector<size_t> lead(g.traces.size(), 0);
  auto call = [&](size_t m, size_t i) -> const CollectiveCall& {
    return traces[g.traces[m]].calls[g.calls[m][i]];
  };
  for (bool changed = g.traces.size() > 1; changed;) {
    changed = false;
    int64_t latest_first = std::numeric_limits<int64_t>::min();
    for (size_t m = 0; m < g.traces.size(); ++m) {
      if (lead[m] == g.calls[m].size()) return lead;
      latest_first = std::max(latest_first, call(m, lead[m]).start_ns);
    }
    for (size_t m = 0; m < g.traces.size(); ++m) {
      if (call(m, lead[m]).end_ns >= latest_first) continue;
      ++lead[m];
      changed = true;
    }
  }
  return lead;
}

// What matching found, summed over the groups.
void add_counts(const AlignmentCounts& counts, bool by_seq, MatchSummary& summary) {
  const int64_t instances = counts.matched + counts.partial + counts.unaligned;
  summary.instances += instances;
  summary.matched += counts.matched;
  summary.partial += counts.partial;
  summary.unaligned += counts.unaligned;
  summary.resyncs += counts.resyncs;
  (by_seq ? summary.by_sequence_number : summary.by_call_order) += instances;
}

struct Matching {
  const std::vector<RankTrace>& traces;
  const std::vector<std::vector<int64_t>>& exposed_ns;
  int world_size;
  std::vector<CollectiveInstance>& out;
  MatchSummary& summary;
  std::vector<std::string>& notes;

  void take(const Alignment& a, bool by_seq) {
    for (const std::vector<AlignedCall>& parts : a.instances) {
      out.push_back(make_instance(traces, exposed_ns, parts, world_size));
    }
    notes.insert(notes.end(), a.notes.begin(), a.notes.end());
    add_counts(a.counts, by_seq, summary);
  }

  void by_order(const GroupSequence& g, const std::string& group, CollectiveKind kind) {
    const Alignment a = align_by_order(traces, g, leading_calls(traces, g));
    if (a.leading > 0) {
      notes.push_back(fmt::format(
          "group {}: {} leading {} call(s) end before another rank's first one starts (profile "
          "windows opened at different times): matched only among the ranks that recorded them",
          shown_group(group), a.leading, kind_name(kind)));
    }
    take(a, false);
  }
};

// Whether every call of the group that is not point-to-point carries a sequence number. PyTorch
// numbers a group's collectives and its point-to-point operations with separate counters, and a
// rank's n-th send need not meet another's n-th receive: those are matched by order.
bool has_seq(const std::vector<RankTrace>& traces, const std::vector<CallsByGroup>& by_rank,
             const std::string& group) {
  bool any = false;
  for (size_t t = 0; t < traces.size(); ++t) {
    auto found = by_rank[t].find(group);
    if (found == by_rank[t].end()) continue;
    for (size_t c : found->second) {
      const CollectiveCall& call = traces[t].calls[c];
      if (call.kind == CollectiveKind::kSendRecv) continue;
      if (call.seq < 0) return false;
      any = true;
    }
  }
  return any;
}

// A group's calls: by sequence number where the trace has them, else kind by kind in call order.
void match_group(const std::vector<CallsByGroup>& by_rank, const std::string& group,
                 Matching& m) {
  std::set<CollectiveKind> kinds;
  for (size_t t = 0; t < m.traces.size(); ++t) {
    auto found = by_rank[t].find(group);
    if (found == by_rank[t].end()) continue;
    for (size_t c : found->second) kinds.insert(m.traces[t].calls[c].kind);
  }
  const bool seq = has_seq(m.traces, by_rank, group);
  if (seq) {
    GroupSequence g = sequence_of(by_rank, group, fmt::format("group {}", shown_group(group)),
                                  m.traces, [](const CollectiveCall& c) {
                                    return c.kind != CollectiveKind::kSendRecv;
                                  });
    m.take(align_by_seq(m.traces, g), true);
  }
  for (CollectiveKind kind : kinds) {
    if (seq && kind != CollectiveKind::kSendRecv) continue;
    GroupSequence g = sequence_of(
        by_rank, group, fmt::format("group {}: {}", shown_group(group), kind_name(kind)), m.traces,
        [kind](const CollectiveCall& c) { return c.kind == kind; });
    m.by_order(g, group, kind);
  }
}

}  // namespace

double instance_busbw_gbps(CollectiveKind kind, uint64_t bytes, double duration_us, int nranks) {
  if (bytes == 0 || duration_us <= 0 || nranks < 1) return kNaN;
  if (kind == CollectiveKind::kUnknown || kind == CollectiveKind::kBarrier) return kNaN;
  double algbw = static_cast<double>(bytes) / comm::kBytesPerGB / (duration_us / kUsPerS);
  double factor = comm::find_collective(kind_name(kind)).bus_factor(nranks);
  return comm::busbw_gbps(algbw, factor);
}

std::vector<CollectiveInstance> match_collectives(const std::vector<RankTrace>& traces,
                                                  const std::vector<std::vector<int64_t>>& exposed_ns,
                                                  int world_size, MatchSummary& summary,
                                                  std::vector<std::string>& notes) {
  std::vector<CallsByGroup> by_rank;
  std::set<std::string> groups;
  for (const RankTrace& trace : traces) {
    by_rank.push_back(calls_by_group(trace));
    for (const auto& entry : by_rank.back()) groups.insert(entry.first);
  }
  std::vector<CollectiveInstance> out;
  Matching matching{traces, exposed_ns, world_size, out, summary, notes};
  for (const std::string& group : groups) match_group(by_rank, group, matching);
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
