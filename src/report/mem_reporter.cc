#include "report/mem_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/units.h"

namespace plumb::report {
namespace {

std::string b(uint64_t bytes) { return format_bytes(bytes); }

int64_t step_at(const mem::Steps& s, size_t event) {
  const auto it = std::upper_bound(s.starts.begin(), s.starts.end(), event);
  return it == s.starts.begin() ? -1 : static_cast<int64_t>(it - s.starts.begin()) - 1;
}

std::string at_step(const mem::Steps& s, size_t event) {
  const int64_t step = step_at(s, event);
  return step < 0 ? fmt::format("event {}", event) : fmt::format("event {} (step {})", event, step + 1);
}

// `over` says what was fitted ("39 steps of the per-step minimum").
void print_creep(const mem::Creep& c, const std::string& over, std::ostream& out) {
  if (c.verdict == "too few steps") {
    fmt::print(out, "creep      too few steps to judge ({} found, {} needed)\n", c.step_min.size(),
               mem::kMinCreepSteps);
    return;
  }
  fmt::print(out, "creep      {} per step (95% CI {} to {}) over {}: {}\n", signed_bytes(c.slope_bytes_per_step),
             signed_bytes(c.ci95_low), signed_bytes(c.ci95_high), over,
             c.verdict == "leak" ? "LEAK" : "stable");
}

nlohmann::json oom_json(const mem::Oom& o) {
  return {{"event", o.event},
          {"step", o.step >= 0 ? nlohmann::json(o.step + 1) : nlohmann::json()},  // from 1
          {"cause", o.cause},
          {"explanation", o.explanation},
          {"requested_bytes", o.requested_bytes},
          {"free_bytes", o.free_bytes},
          {"cached_free_bytes", o.cached_free_bytes},
          {"device_free_bytes", o.device_free_bytes},
          {"largest_free_block_bytes", o.largest_free_block_bytes},
          {"allocated_bytes", o.allocated_bytes},
          {"reserved_bytes", o.reserved_bytes},
          {"shortfall_bytes", o.shortfall_bytes},
          {"usual_step_peak_bytes", o.usual_step_peak_bytes}};
}

nlohmann::json fragmentation_json(const mem::Fragmentation& f) {
  return {{"reserved_bytes", f.reserved},
          {"allocated_bytes", f.allocated},
          {"free_bytes", f.free},
          {"largest_free_block_bytes", f.largest_free_block},
          {"scattered", f.scattered}};
}

}  // namespace

std::string signed_bytes(double bytes) {
  const std::string magnitude = format_bytes(static_cast<uint64_t>(std::abs(bytes) + 0.5));
  return (bytes < 0 ? "-" : "+") + magnitude;
}

void print_mem_analysis(const mem::Analysis& a, std::ostream& out) {
  const mem::Timeline& tl = a.timeline;
  fmt::print(out, "# plumb mem analyze · {} · {} events{}\n", a.source, a.events,
             a.has_time ? "" : " (no times: ordered by event index)");
  fmt::print(out, "# steps: {}\n", a.steps.how);
  if (tl.dropped_frees > 0 || tl.initial.allocated > 0) {
    fmt::print(out, "# the trace starts with {} allocated ({} frees of blocks allocated before it: the ring buffer dropped early events)\n",
               b(tl.initial.allocated), tl.dropped_frees);
  }
  fmt::print(out, "peak       allocated {} at {} · reserved {} at {} · active {}\n", b(tl.peak.allocated),
             at_step(a.steps, tl.peak_allocated_index), b(tl.peak.reserved),
             at_step(a.steps, tl.peak_reserved_index), b(tl.peak.active));
  std::string live;
  for (const auto& [category, bytes] : a.live_at_peak) {
    if (bytes > 0) live += fmt::format("{}{} {}", live.empty() ? "" : " · ", category, b(bytes));
  }
  fmt::print(out, "at peak    {}\n", live.empty() ? "nothing live" : live);
  fmt::print(out,
             "fragment   1 − peak active / peak reserved = {:.1f}% · at the reserved peak {} free "
             "in segments, largest block {} ({:.0f}% scattered) · at the end {} free, largest {}\n",
             100 * a.fragmentation, b(a.at_peak.free), b(a.at_peak.largest_free_block),
             100 * a.at_peak.scattered, b(a.at_end.free), b(a.at_end.largest_free_block));
  print_creep(a.creep, fmt::format("{} steps of the per-step minimum", a.creep.step_min.size()), out);
  for (const mem::LeakSite& g : a.grew) {
    fmt::print(out, "grew       {} per step, {} live allocations at the last step: {}\n",
               signed_bytes(g.bytes_per_step), g.allocations_live, g.where);
  }
  for (const mem::Oom& o : a.ooms) {
    fmt::print(out, "oom        {}: {} — {}\n", at_step(a.steps, o.event), o.cause, o.explanation);
  }
  if (a.ooms.empty()) fmt::print(out, "oom        none in the trace\n");
}

void write_mem_timeline_csv(const mem::Trace& t, const mem::Analysis& a, std::ostream& out) {
  fmt::memory_buffer buf;
  fmt::format_to(std::back_inserter(buf), "event,action,time_us,step,allocated,active,reserved\n");
  size_t next_step = 0;
  for (size_t i = 0; i < a.timeline.samples.size() && i < t.events.size(); ++i) {
    while (next_step < a.steps.starts.size() && a.steps.starts[next_step] <= i) ++next_step;
    const mem::Sample s = a.timeline.samples[i];
    const double time = t.events[i].time_us;
    fmt::format_to(std::back_inserter(buf), "{},{},{},{},{},{},{}\n", i,
                   mem::action_name(t.events[i].action),
                   std::isnan(time) ? std::string() : fmt::format("{:.0f}", time),
                   next_step == 0 ? std::string() : std::to_string(next_step), s.allocated, s.active,
                   s.reserved);
    if (buf.size() > (1 << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

nlohmann::json mem_analysis_json(const mem::Analysis& a) {
  const mem::Timeline& tl = a.timeline;
  nlohmann::json steps = nlohmann::json::array();
  for (const mem::StepFigures& s : a.per_step) {
    steps.push_back({{"first_event", s.first_event},
                     {"min_allocated_bytes", s.min_allocated},
                     {"peak_allocated_bytes", s.peak_allocated},
                     {"peak_reserved_bytes", s.peak_reserved}});
  }
  nlohmann::json ooms = nlohmann::json::array();
  for (const mem::Oom& o : a.ooms) ooms.push_back(oom_json(o));
  nlohmann::json grew = nlohmann::json::array();
  for (const mem::LeakSite& g : a.grew) {
    grew.push_back({{"where", g.where},
                    {"bytes_per_step", g.bytes_per_step},
                    {"live_first_bytes", g.live_first},
                    {"live_last_bytes", g.live_last},
                    {"allocations_live", g.allocations_live}});
  }
  const char* source = a.steps.source == mem::StepSource::kRegex      ? "annotated"
                       : a.steps.source == mem::StepSource::kDetected ? "detected"
                                                                      : "none";
  return {{"schema", "plumb.mem/1"},
          {"input", "trace"},
          {"source", a.source},
          {"events", a.events},
          {"peak_allocated_bytes", tl.peak.allocated},
          {"peak_reserved_bytes", tl.peak.reserved},
          {"peak_active_bytes", tl.peak.active},
          {"initial_allocated_bytes", tl.initial.allocated},
          {"fragmentation", a.fragmentation},
          {"fragmentation_at_peak", fragmentation_json(a.at_peak)},
          {"fragmentation_at_end", fragmentation_json(a.at_end)},
          {"creep_bytes_per_step", a.creep.slope_bytes_per_step},
          {"creep_ci95_bytes_per_step", {a.creep.ci95_low, a.creep.ci95_high}},
          {"creep_verdict", a.creep.verdict},
          {"creep_sites", grew},
          {"steps", {{"count", a.steps.starts.size()}, {"source", source},
                     {"confidence", a.steps.confidence}, {"how", a.steps.how}, {"per_step", steps}}},
          {"categories", a.live_at_peak},
          {"oom", a.ooms.empty() ? nlohmann::json() : oom_json(a.ooms.front())},
          {"ooms", ooms}};
}

namespace {

// Rows of the console timeline: every dump up to this many, else this many evenly spaced.
constexpr size_t kConsoleTimelineRows = 10;

double mib(uint64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(kMiB); }

std::vector<size_t> timeline_rows(size_t n) {
  std::vector<size_t> rows;
  const size_t shown = std::min(n, kConsoleTimelineRows);
  for (size_t i = 0; i < shown; ++i) rows.push_back(shown == n ? i : i * (n - 1) / (shown - 1));
  return rows;
}

void print_stats_timeline(const mem::StatsAnalysis& a, std::ostream& out) {
  const size_t n = a.timeline.size();
  const std::vector<size_t> rows = timeline_rows(n);
  fmt::print(out, "timeline   {}\n",
             rows.size() == n ? std::string("every dump")
                              : fmt::format("{} of {} dumps, evenly spaced (--json has every one)", rows.size(), n));
  fmt::print(out, "  {:>8} {:>14} {:>14} {:>14} {:>16} {:>8} {:>7} {:>5}\n", "step", "allocated MiB",
             "peak MiB", "reserved MiB", "inact.split MiB", "segments", "retries", "ooms");
  for (size_t i : rows) {
    const mem::StatsPoint& p = a.timeline[i];
    fmt::print(out, "  {:>8} {:>14.1f} {:>14.1f} {:>14.1f} {:>16.1f} {:>8} {:>7} {:>5}\n", p.step,
               mib(p.allocated), mib(p.allocated_peak), mib(p.reserved), mib(p.inactive_split), p.segments,
               p.alloc_retries, p.ooms);
  }
}

// num_alloc_retries and num_ooms: counters, so a dump only says by which step they rose.
void print_counters(const mem::StatsAnalysis& a, std::ostream& out) {
  if (a.alloc_retries == 0) {
    fmt::print(out, "retries    none (num_alloc_retries never rose)\n");
  } else {
    fmt::print(out,
               "retries    {} cudaMalloc retr{} after freeing the cache, first by step {}: "
               "fragmentation pressure (the cached free blocks did not fit the requests)\n",
               a.alloc_retries, a.alloc_retries == 1 ? "y" : "ies", *a.first_retry_step);
  }
  if (a.ooms == 0) {
    fmt::print(out, "oom        none (num_ooms never rose)\n");
  } else {
    fmt::print(out, "oom        {} OOM(s), first by step {} (a dump counts them; a snapshot says why)\n",
               a.ooms, *a.first_oom_step);
  }
}

nlohmann::json stats_point_json(const mem::StatsPoint& p) {
  return {{"step", p.step},
          {"allocated_bytes", p.allocated},
          {"allocated_peak_bytes", p.allocated_peak},
          {"active_bytes", p.active},
          {"active_peak_bytes", p.active_peak},
          {"reserved_bytes", p.reserved},
          {"reserved_peak_bytes", p.reserved_peak},
          {"inactive_split_bytes", p.inactive_split},
          {"segments", p.segments},
          {"num_alloc_retries", p.alloc_retries},
          {"num_ooms", p.ooms}};
}

nlohmann::json optional_step(const std::optional<uint64_t>& step) {
  return step ? nlohmann::json(*step) : nlohmann::json();
}

}  // namespace

void print_mem_stats(const mem::StatsAnalysis& a, std::ostream& out) {
  const mem::StatsPoint& end = a.timeline.back();
  fmt::print(out, "# plumb mem analyze · {} (memory_stats() dumps) · {} dumps, steps {} to {}\n",
             a.source, a.timeline.size(), a.timeline.front().step, end.step);
  fmt::print(out, "peak       allocated {} by step {} · reserved {} by step {} · active {}\n",
             b(a.peak.allocated), a.peak_allocated_step, b(a.peak.reserved), a.peak_reserved_step,
             b(a.peak.active));
  fmt::print(out,
             "fragment   1 − peak active / peak reserved = {:.1f}% · at the end (step {}) {} reserved but not "
             "active, {} in inactive split blocks\n",
             100 * a.fragmentation, end.step, b(a.end_free), b(end.inactive_split));
  print_creep(a.creep, fmt::format("{} dumps of allocated_bytes.all.current", a.creep.step_min.size()), out);
  print_counters(a, out);
  print_stats_timeline(a, out);
}

nlohmann::json mem_stats_json(const mem::StatsAnalysis& a) {
  const mem::StatsPoint& end = a.timeline.back();
  nlohmann::json timeline = nlohmann::json::array();
  for (const mem::StatsPoint& p : a.timeline) timeline.push_back(stats_point_json(p));
  return {{"schema", "plumb.mem/1"},
          {"input", "memory_stats"},
          {"source", a.source},
          {"dumps", a.timeline.size()},
          {"first_step", a.timeline.front().step},
          {"last_step", end.step},
          {"peak_allocated_bytes", a.peak.allocated},
          {"peak_reserved_bytes", a.peak.reserved},
          {"peak_active_bytes", a.peak.active},
          {"peak_allocated_step", a.peak_allocated_step},
          {"peak_reserved_step", a.peak_reserved_step},
          {"fragmentation", a.fragmentation},
          {"fragmentation_at_end", {{"reserved_bytes", end.reserved},
                                    {"allocated_bytes", end.allocated},
                                    {"active_bytes", end.active},
                                    {"free_bytes", a.end_free},
                                    {"inactive_split_bytes", end.inactive_split}}},
          {"creep_bytes_per_step", a.creep.slope_bytes_per_step},
          {"creep_ci95_bytes_per_step", {a.creep.ci95_low, a.creep.ci95_high}},
          {"creep_verdict", a.creep.verdict},
          {"creep_steps", a.creep.steps},
          {"num_alloc_retries", a.alloc_retries},
          {"first_alloc_retry_step", optional_step(a.first_retry_step)},
          {"num_ooms", a.ooms},
          {"first_oom_step", optional_step(a.first_oom_step)},
          {"timeline", timeline}};
}

}  // namespace plumb::report
