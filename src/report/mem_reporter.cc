#include "report/mem_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "common/units.h"

namespace plumb::report {
namespace {

std::string b(uint64_t bytes) { return format_bytes(bytes); }

std::string signed_bytes(double bytes) {
  const std::string magnitude = format_bytes(static_cast<uint64_t>(std::abs(bytes) + 0.5));
  return (bytes < 0 ? "-" : "+") + magnitude;
}

int64_t step_at(const mem::Steps& s, size_t event) {
  const auto it = std::upper_bound(s.starts.begin(), s.starts.end(), event);
  return it == s.starts.begin() ? -1 : static_cast<int64_t>(it - s.starts.begin()) - 1;
}

std::string at_step(const mem::Steps& s, size_t event) {
  const int64_t step = step_at(s, event);
  return step < 0 ? fmt::format("event {}", event) : fmt::format("event {} (step {})", event, step + 1);
}

void print_creep(const mem::Analysis& a, std::ostream& out) {
  const mem::Creep& c = a.creep;
  if (c.verdict == "too few steps") {
    fmt::print(out, "creep      too few steps to judge ({} found, {} needed)\n", c.step_min.size(),
               mem::kMinCreepSteps);
    return;
  }
  fmt::print(out, "creep      {} per step (95% CI {} to {}) over {} steps of the per-step minimum: {}\n",
             signed_bytes(c.slope_bytes_per_step), signed_bytes(c.ci95_low), signed_bytes(c.ci95_high),
             c.step_min.size(), c.verdict == "leak" ? "LEAK" : "stable");
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
  print_creep(a, out);
  for (const mem::Oom& o : a.ooms) {
    fmt::print(out, "oom        {}: {} — {}\n", at_step(a.steps, o.event), o.cause, o.explanation);
  }
  if (a.ooms.empty()) fmt::print(out, "oom        none in the trace\n");
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
  const char* source = a.steps.source == mem::StepSource::kRegex      ? "annotated"
                       : a.steps.source == mem::StepSource::kDetected ? "detected"
                                                                      : "none";
  return {{"schema", "plumb.mem/1"},
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
          {"steps", {{"count", a.steps.starts.size()}, {"source", source},
                     {"confidence", a.steps.confidence}, {"how", a.steps.how}, {"per_step", steps}}},
          {"categories", a.live_at_peak},
          {"oom", a.ooms.empty() ? nlohmann::json() : oom_json(a.ooms.front())},
          {"ooms", ooms}};
}

}  // namespace plumb::report
