#include "report/step_console_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "common/units.h"
#include "report/step_group_name.h"
#include "step/classify.h"

namespace plumb::report {
namespace {

constexpr size_t kMaxListedRanks = 4;  // a longer group shows its first two and last ranks
constexpr size_t kGroupColumn = 22;    // group labels beyond this are cut
constexpr size_t kWholeTraceStragglers = 3;

const step::StepBreakdown* find_step(const step::RankSteps& r, int64_t number) {
  for (const step::StepBreakdown& s : r.steps) {
    if (s.step == number) return &s;
  }
  return nullptr;
}

// The rank with the longest time in this step (the first on ties).
struct Slowest {
  const step::RankSteps* rank = nullptr;
  const step::StepBreakdown* step = nullptr;
};

Slowest slowest_rank(const step::StepResult& r, int64_t number) {
  Slowest out;
  for (const step::RankSteps& rank : r.ranks) {
    const step::StepBreakdown* s = find_step(rank, number);
    if (s != nullptr && (out.step == nullptr || s->step_time_us > out.step->step_time_us)) {
      out = {&rank, s};
    }
  }
  return out;
}

std::string share_percent(double part, double whole) {
  if (!(whole > 0) || std::isnan(part)) return "?";
  return fmt::format("{:.1f}%", 100.0 * part / whole);
}

std::string size_text(uint64_t bytes) { return bytes == 0 ? "?" : format_bytes(bytes); }

std::string gbps(double v) { return std::isnan(v) ? "-" : fmt::format("{:.2f} GB/s", v); }

double baseline_share(const step::CollectiveInstance& c) {
  return c.baseline_busbw_gbps > 0 ? c.busbw_gbps / c.baseline_busbw_gbps : step::kNaN;
}

std::string cut(std::string text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 2) + "..";
}

void print_header(const step::StepResult& r, size_t steps, std::ostream& out) {
  std::set<std::string> formats;
  for (const step::RankSteps& rank : r.ranks) formats.insert(rank.format);
  std::string format_list;
  for (const std::string& f : formats) format_list += (format_list.empty() ? "" : ", ") + f;
  fmt::print(out, "plumb step · {} rank{}{} · {} step{} · {} traces\n", r.ranks.size(),
             r.ranks.size() == 1 ? "" : "s",
             r.world_size > 0 ? fmt::format(" of a world of {}", r.world_size) : "", steps,
             steps == 1 ? "" : "s", format_list.empty() ? "no" : format_list);
  if (!r.baseline.empty()) fmt::print(out, "baseline: {}\n", r.baseline);
  if (!r.plan_source.empty()) fmt::print(out, "plan: {}\n", r.plan_source);
}

std::string plural(int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "collectives: 767 of 768 instances matched across the ranks (by call order)", then a line for
// each way an instance was not: "  1 did not line up: left out (see notes)".
void print_matching(const step::StepResult& r, std::ostream& out) {
  const step::MatchSummary& m = r.matching;
  if (m.instances == 0) return;
  if (r.ranks.size() < 2) {
    fmt::print(out, "collectives: {} (one rank in the set: none matched across ranks)\n",
               plural(m.instances, "instance", "instances"));
    return;
  }
  const std::string how =
      m.by_sequence_number == 0 ? "by call order"
      : m.by_call_order == 0    ? "by sequence number"
                                : fmt::format("{} by sequence number, {} by call order",
                                              m.by_sequence_number, m.by_call_order);
  fmt::print(out, "collectives: {} of {} matched across the ranks ({})\n", m.matched,
             plural(m.instances, "instance", "instances"), how);
  if (m.partial > 0) {
    fmt::print(out, "  {} recorded by only some ranks (profile windows)\n", m.partial);
  }
  if (m.unaligned > 0) fmt::print(out, "  {} did not line up: left out (see notes)\n", m.unaligned);
  if (m.resyncs > 0) fmt::print(out, "  re-synchronised {}\n", plural(m.resyncs, "time", "times"));
}

void print_breakdown(const step::StepBreakdown& s, std::ostream& out) {
  const double t = s.step_time_us;
  const auto line = [&](const char* what, double us, const char* remark) {
    fmt::print(out, "    {:<24} {:>12} {:>7}{}\n", what, step_ms(us), share_percent(us, t), remark);
  };
  line("compute", s.compute_us, "");
  line("exposed communication", s.exposed_communication_us, "");
  line("overlapped", s.overlapped_us, "   communication under compute (part of compute)");
  line("memory", s.memory_us, "");
  line("idle", s.idle_us, "");
}

std::vector<const step::CollectiveInstance*> top_exposed(const step::StepResult& r,
                                                         int64_t number) {
  std::vector<const step::CollectiveInstance*> top;
  for (const step::CollectiveInstance& c : r.collectives) {
    if (c.step == number && c.exposed_us > 0) top.push_back(&c);
  }
  std::stable_sort(top.begin(), top.end(),
                   [](const auto* a, const auto* b) { return a->exposed_us > b->exposed_us; });
  if (top.size() > kTopExposedCollectives) top.resize(kTopExposedCollectives);
  return top;
}

// "reducescatter 64 MiB on group dp(0,1,..,7) ran at 35% of its baseline", then "(45.20 of
// 129.10 GB/s on layer dp)", for the collective of the step furthest below its baseline.
void print_worst_against_baseline(const step::StepResult& r, int64_t number, std::ostream& out) {
  const step::CollectiveInstance* worst = nullptr;
  for (const step::CollectiveInstance& c : r.collectives) {
    if (c.step != number || std::isnan(baseline_share(c))) continue;
    if (worst == nullptr || baseline_share(c) < baseline_share(*worst)) worst = &c;
  }
  if (worst == nullptr) return;
  fmt::print(out,
             "  {} {} on group {} ran at {:.0f}% of its baseline\n    ({:.2f} of {:.2f} GB/s{})\n",
             step::kind_name(worst->kind), size_text(worst->bytes),
             cut(group_label(worst->group, worst->group_ranks, r.world_size), kGroupColumn),
             100.0 * baseline_share(*worst), worst->busbw_gbps, worst->baseline_busbw_gbps,
             worst->baseline_layer.empty() ? "" : " on layer " + worst->baseline_layer);
}

void print_collectives(const step::StepResult& r, int64_t number, std::ostream& out) {
  const auto top = top_exposed(r, number);
  if (top.empty()) {
    fmt::print(out, "  no exposed collective in this step\n");
    return;
  }
  fmt::print(out, "  top exposed collectives:\n");
  fmt::print(out, "    {:<14} {:<22} {:>9} {:>12} {:>12}  {}\n", "kind", "group", "size", "exposed",
             "busbw", "of baseline");
  for (const step::CollectiveInstance* c : top) {
    const double share = baseline_share(*c);
    fmt::print(out, "    {:<14} {:<22} {:>9} {:>12} {:>12}  {}\n", step::kind_name(c->kind),
               cut(group_label(c->group, c->group_ranks, r.world_size), kGroupColumn),
               size_text(c->bytes),
               step_ms(c->exposed_us), gbps(c->busbw_gbps),
               std::isnan(share)
                   ? "-"
                   : fmt::format("{:.0f}% of {}", 100.0 * share, gbps(c->baseline_busbw_gbps)));
  }
  print_worst_against_baseline(r, number, out);
}

void print_straggler(const step::StepResult& r, int64_t number, std::ostream& out) {
  for (const step::Straggler& s : r.stragglers) {
    if (s.step != number) continue;
    fmt::print(out, "  straggler: rank {} — the others waited {} for it\n", s.rank,
               step_ms(s.waited_on_us));
    return;
  }
  fmt::print(out, "  straggler: none found (no collective matched across ranks)\n");
}

void print_step(const step::StepResult& r, int64_t number, std::ostream& out) {
  const Slowest slow = slowest_rank(r, number);
  fmt::print(out, "\nstep {} · slowest rank {}: {}\n", number, slow.rank->rank,
             step_ms(slow.step->step_time_us));
  fmt::print(out, "  breakdown of rank {}:\n", slow.rank->rank);
  print_breakdown(*slow.step, out);
  print_collectives(r, number, out);
  print_straggler(r, number, out);
}

void print_whole_trace(const step::StepResult& r, std::ostream& out) {
  std::vector<std::string> parts;
  for (const step::Straggler& s : r.stragglers) {
    if (s.step != -1 || parts.size() == kWholeTraceStragglers) continue;
    parts.push_back(fmt::format("{} for rank {}", step_ms(s.waited_on_us), s.rank));
  }
  if (parts.empty()) return;
  std::string list;
  for (const std::string& p : parts) list += (list.empty() ? "" : ", ") + p;
  fmt::print(out, "\nwhole trace: the others waited {}\n", list);
}

void print_step_plan(const step::StepResult& r, std::ostream& out) {
  if (r.plan.empty()) return;
  fmt::print(out, "\nagainst the plan{}:\n",
             r.plan_source.empty() ? "" : fmt::format(" ({})", r.plan_source));
  fmt::print(out, "    {:<22} {:>12} {:>12} {:>8}\n", "component", "measured", "predicted",
             "ratio");
  for (const step::PlanRow& p : r.plan) {
    const double ratio = p.predicted_us > 0 ? p.measured_us / p.predicted_us : step::kNaN;
    fmt::print(out, "    {:<22} {:>12} {:>12} {:>8}\n", p.component, step_ms(p.measured_us),
               step_ms(p.predicted_us), std::isnan(ratio) ? "-" : fmt::format("{:.2f}x", ratio));
  }
}

void print_notes(const step::StepResult& r, std::ostream& out) {
  if (r.notes.empty()) return;
  fmt::print(out, "\nnotes:\n");
  for (const std::string& n : r.notes) fmt::print(out, "  - {}\n", n);
}

}  // namespace

std::string step_ms(double us) {
  return std::isnan(us) ? "?" : fmt::format("{:.3f} ms", us / 1000.0);
}

std::string group_label(const std::string& group, const std::vector<int>& ranks, int world_size) {
  const std::string role = group_role(group, ranks, world_size);
  if (ranks.empty()) return role.empty() ? "all ranks" : role;
  std::string list;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const bool listed = ranks.size() <= kMaxListedRanks || i < 2 || i + 1 == ranks.size();
    if (listed) list += fmt::format("{}{}", list.empty() ? "" : ",", ranks[i]);
    if (!listed && i == 2) list += ",..";
  }
  return fmt::format("{}({})", role, list);
}

std::vector<int64_t> step_numbers(const step::StepResult& result) {
  std::set<int64_t> numbers;
  for (const step::RankSteps& r : result.ranks) {
    for (const step::StepBreakdown& s : r.steps) numbers.insert(s.step);
  }
  return {numbers.begin(), numbers.end()};
}

void StepConsoleReporter::report(const step::StepResult& result, std::ostream& out) const {
  const std::vector<int64_t> steps = step_numbers(result);
  print_header(result, steps.size(), out);
  print_matching(result, out);
  for (int64_t number : steps) print_step(result, number, out);
  print_whole_trace(result, out);
  print_step_plan(result, out);
  print_notes(result, out);
}

}  // namespace plumb::report
