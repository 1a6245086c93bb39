#include "report/mem_replay_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>

#include "common/units.h"

namespace plumb::report {
namespace {

std::string change(uint64_t value, uint64_t reference) {
  if (reference == 0) return "";
  double pct = std::round(1000.0 * (static_cast<double>(value) / static_cast<double>(reference) - 1)) / 10;
  if (pct == 0) pct = 0;  // no "-0.0%"
  return fmt::format("{:+.1f}%", pct);
}

std::string outcome(const ReplayReport& r, const mem::ReplayResult& p) {
  if (p.ran_out) {
    return fmt::format("runs out at event {} ({})", p.first_failure_event,
                       format_bytes(p.first_failure_bytes));
  }
  if (r.has_recorded_oom && p.served_recorded_oom) return "fits, serves the OOM's request";
  return r.capacity == 0 ? "-" : "fits";
}

void print_check(const ReplayReport& r, std::ostream& out) {
  const mem::ReserveCheck& c = r.check;
  if (!c.comparable) {
    fmt::print(out, "check      not compared with the recorded reserved bytes: {}\n", c.why_not);
  } else if (c.mismatches == 0) {
    fmt::print(out, "check      '{}' reproduces the recorded reserved bytes at all {} allocations "
                    "and frees\n", r.policies.front().policy, c.events_compared);
  } else {
    fmt::print(out, "check      WARNING: '{}' differs from the recorded reserved bytes at {} of {} "
                    "allocations and frees, first at event {} (recorded {}, replayed {}): the "
                    "recording allocator behaved otherwise (settings the model does not know, or "
                    "a trace not written by PyTorch's caching allocator)\n",
               r.policies.front().policy, c.mismatches, c.events_compared, c.first_mismatch,
               c.recorded_at_mismatch, c.replayed_at_mismatch);
  }
}

// The answer the table exists for: which policies would have run where the recorded one did not.
void print_verdict(const ReplayReport& r, std::ostream& out) {
  if (r.capacity == 0) return;
  std::vector<std::string> saved, failed;
  for (const auto& p : r.policies) (p.ran_out ? failed : saved).push_back(p.policy);
  const bool recorded_failed = r.policies.front().ran_out;
  if (recorded_failed && !saved.empty()) {
    fmt::print(out, "verdict    at {} the recorded policy runs out; these would have run: {}\n",
               format_bytes(r.capacity), fmt::join(saved, ", "));
  } else if (recorded_failed) {
    fmt::print(out, "verdict    at {} every policy runs out: the live bytes themselves do not fit\n",
               format_bytes(r.capacity));
  } else {
    fmt::print(out, "verdict    the recorded policy fits in {}{}\n", format_bytes(r.capacity),
               failed.empty() ? "" : fmt::format("; these would run out: {}", fmt::join(failed, ", ")));
  }
}

}  // namespace

void print_mem_replay(const ReplayReport& r, std::ostream& out) {
  fmt::print(out, "plumb mem replay: {}\n", r.source);
  fmt::print(out, "events     {}, {} allocations replayed\n", r.events,
             r.policies.empty() ? 0 : r.policies.front().allocations);
  fmt::print(out, "capacity   {}\n",
             r.capacity == 0 ? std::string("unlimited (the trace has no oom; --capacity sets one)")
                             : fmt::format("{} ({})", format_bytes(r.capacity), r.capacity_from));
  print_check(r, out);
  const uint64_t reference = r.policies.empty() ? 0 : r.policies.front().peak_reserved;
  uint64_t best = UINT64_MAX;
  for (const auto& p : r.policies) best = std::min(best, p.peak_reserved);
  fmt::print(out, "\n{:<16} {:>13} {:>8} {:>7} {:>13} {:>7}  {}\n", "policy", "peak reserved",
             "vs 1st", "frag", "segs +/-", "flushes", "at capacity");
  for (const auto& p : r.policies) {
    fmt::print(out, "{:<16} {:>13} {:>8} {:>6.1f}% {:>13} {:>7}  {}{}\n", p.policy,
               format_bytes(p.peak_reserved), change(p.peak_reserved, reference),
               100 * p.fragmentation, fmt::format("{}/{}", p.segment_allocs, p.segment_frees),
               p.cache_flushes, outcome(r, p), p.peak_reserved == best ? "  (lowest peak)" : "");
  }
  fmt::print(out, "\n");
  for (const auto& p : r.policies) fmt::print(out, "  {:<16} {}\n", p.policy, p.description);
  print_verdict(r, out);
}

nlohmann::json mem_replay_json(const ReplayReport& r) {
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& p : r.policies) {
    policies.push_back({{"name", p.policy},
                        {"description", p.description},
                        {"allocations", p.allocations},
                        {"peak_allocated_bytes", p.peak_allocated},
                        {"peak_reserved_bytes", p.peak_reserved},
                        {"final_reserved_bytes", p.final_reserved},
                        {"fragmentation", p.fragmentation},
                        {"free_at_peak_bytes", p.free_at_peak},
                        {"largest_free_at_peak_bytes", p.largest_free_at_peak},
                        {"segment_allocs", p.segment_allocs},
                        {"segment_frees", p.segment_frees},
                        {"cache_flushes", p.cache_flushes},
                        {"ran_out", p.ran_out},
                        {"first_failure_event", p.ran_out ? nlohmann::json(p.first_failure_event) : nlohmann::json()},
                        {"first_failure_bytes", p.ran_out ? nlohmann::json(p.first_failure_bytes) : nlohmann::json()},
                        {"served_recorded_oom", p.served_recorded_oom}});
  }
  const mem::ReserveCheck& c = r.check;
  return {{"schema", "plumb.mem-replay/1"},
          {"source", r.source},
          {"events", r.events},
          {"capacity_bytes", r.capacity == 0 ? nlohmann::json() : nlohmann::json(r.capacity)},
          {"capacity_from", r.capacity_from},
          {"recorded_peak_reserved_bytes", r.recorded_peak_reserved},
          {"check",
           {{"comparable", c.comparable},
            {"why_not", c.why_not},
            {"events_compared", c.events_compared},
            {"mismatches", c.mismatches},
            {"first_mismatch_event", c.mismatches ? nlohmann::json(c.first_mismatch) : nlohmann::json()}}},
          {"policies", policies}};
}

}  // namespace plumb::report
