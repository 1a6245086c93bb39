#include "step/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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

// The group key calls are matched under: the group name, or "" when the trace does not say.
using GroupCalls = std::map<std::string, std::vector<size_t>>;

// Calls of one rank that start inside its step range, by group, in issue order.
GroupCalls calls_by_group(const RankTrace& trace) {
  GroupCalls out;
  if (trace.steps.empty()) return out;
  int64_t first = trace.steps.front().start_ns;
  int64_t last = trace.steps.back().end_ns;
  for (size_t c = 0; c < trace.calls.size(); ++c) {
    const CollectiveCall& call = trace.calls[c];
    if (call.start_ns < first || call.start_ns >= last) continue;
    out[call.group].push_back(c);
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

void match_group(const std::vector<RankTrace>& traces,
                 const std::vector<std::vector<int64_t>>& exposed_ns,
                 const std::vector<GroupCalls>& by_rank, const std::string& group, int world_size,
                 std::vector<CollectiveInstance>& out, std::vector<std::string>& notes) {
  std::vector<size_t> ranks = members(traces, group, by_rank);
  size_t longest = 0;
  for (size_t t : ranks) longest = std::max(longest, by_rank[t].at(group).size());
  for (size_t n = 0; n < longest; ++n) {
    std::vector<Participant> parts;
    for (size_t t : ranks) {
      const std::vector<size_t>& calls = by_rank[t].at(group);
      if (n < calls.size()) parts.push_back({t, calls[n]});
    }
    CollectiveKind kind = traces[parts.front().trace].calls[parts.front().call].kind;
    for (const Participant& p : parts) {
      CollectiveKind other = traces[p.trace].calls[p.call].kind;
      if (other == kind) continue;
      notes.push_back(fmt::format(
          "group {}: call {} is {} on rank {} but {} on rank {}: the ranks' calls do not line up "
          "from there (traces of different steps?); {} instances matched",
          group.empty() ? "(unnamed)" : group, n + 1, kind_name(kind),
          traces[parts.front().trace].rank, kind_name(other), traces[p.trace].rank, n));
      return;
    }
    out.push_back(make_instance(traces, exposed_ns, parts, world_size));
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
