#include "report/set_html.h"

#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include "common/strings.h"
#include "common/units.h"
#include "report/html_context.h"
#include "report/html_escape.h"
#include "report/html_out.h"
#include "report/html_report.h"
#include "report/html_style.h"
#include "report/memory_baseline_reporter.h"
#include "report/mem_reporter.h"
#include "report/serve_html.h"
#include "report/serve_reporter.h"
#include "report/set_parts.h"
#include "supervise/recovery_json.h"

namespace plumb::report {
namespace {

// After kPageStyle and the comm report's rules: A and B side by side, a missing part in grey.
constexpr std::string_view kSetStyle = R"(
.pair{display:flex;flex-wrap:wrap;gap:24px}.pair>div{flex:1 1 520px;min-width:0;overflow-x:auto}
p.missing,td.missing{color:#8a5a00}td.held{color:#1a6b1a}
tr.leak,tr.fail{background:#fde2e2}
)";

std::string bytes_cell(const std::optional<double>& v) {
  return v ? format_bytes(static_cast<uint64_t>(std::llround(std::abs(*v)))) : "—";
}
std::string micros_one_decimal(double v) { return std::isnan(v) ? "—" : fmt::format("{:.1f}", v); }
std::string seconds_cell(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}", *v) : "—";
}
template <typename T>
std::string optional_text(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : "—";
}

std::string name_or_source(const baseline::Record& r) {
  return r.id > 0 ? fmt::format("baseline {}", r.id) : r.source;
}

// ---- one baseline's block of each part -------------------------------------------------------

void append_missing(const baseline::Record& r, char letter, const SetPart& part,
                    fmt::memory_buffer& out) {
  put(out, "<p class=\"missing\">");
  append_escaped(out, baseline_name(letter, r));
  putf(out, " · {}: missing — ", part.title);
  append_escaped(out, missing_reason(r, part));
  put(out, "</p>");
}

void heading(const baseline::Record& r, char letter, fmt::memory_buffer& out) {
  put(out, "<h3>");
  append_escaped(out, baseline_name(letter, r));
  put(out, "</h3>");
}

void topo_block(const baseline::Record& r, char letter, fmt::memory_buffer& out) {
  append_topology_of(r, letter, out);
}

void step_block(const baseline::Record& r, char letter, fmt::memory_buffer& out) {
  heading(r, letter, out);
  append_step_block(baseline::summarize_step(r.step, name_or_source(r)), out);
}

void memory_block(const baseline::Record& r, char letter, fmt::memory_buffer& out) {
  heading(r, letter, out);
  append_memory_block(memory_baseline_from_json(r.memory, name_or_source(r)), out);
}

void recovery_block(const baseline::Record& r, char letter, fmt::memory_buffer& out) {
  heading(r, letter, out);
  append_recovery_block(supervise::recovery_from_json(r.recovery, name_or_source(r)), out);
}

// ---- the parts' sections ----------------------------------------------------------------------

struct Page {
  const baseline::Record& a;
  const baseline::Record* b;
  const baseline::Diff* diff;
};

void missing_lines(const Page& p, const SetPart& part, fmt::memory_buffer& out) {
  if (!part.held(p.a)) append_missing(p.a, 'A', part, out);
  if (p.b != nullptr && !part.held(*p.b)) append_missing(*p.b, 'B', part, out);
}

// A part drawn per baseline: A and B side by side, each its block or why it is missing.
template <void (*Block)(const baseline::Record&, char, fmt::memory_buffer&)>
void side_by_side(const Page& p, const SetPart& part, fmt::memory_buffer& out) {
  put(out, "<div class=\"pair\">");
  for (const auto& [r, letter] : {std::pair{&p.a, 'A'}, std::pair{p.b, 'B'}}) {
    if (r == nullptr) continue;
    put(out, "<div>");
    if (part.held(*r)) {
      Block(*r, letter, out);
    } else {
      append_missing(*r, letter, part, out);
    }
    put(out, "</div>");
  }
  put(out, "</div>");
}

void versions_section(const Page& p, const SetPart& part, fmt::memory_buffer& out) {
  missing_lines(p, part, out);
  if (part.held(p.a) || (p.b != nullptr && part.held(*p.b))) append_environment_tables(p.a, p.b, out);
}

void comm_section(const Page& p, const SetPart& part, fmt::memory_buffer& out) {
  missing_lines(p, part, out);
  const bool a_held = part.held(p.a);
  const bool b_held = p.b != nullptr && part.held(*p.b);
  if (p.diff != nullptr) append_diff_verdict(*p.diff, out);
  if (a_held) return append_comm_sections(p.a, b_held ? p.b : nullptr, p.diff, out);
  if (b_held) {
    put(out, "<p class=\"note\">Only B holds comm measurements: drawn alone, in A's colour.</p>");
    append_comm_sections(*p.b, nullptr, nullptr, out);
  }
}

// Serving: each set's setup and runs side by side, then the charts with both overlaid.
void serve_section(const Page& p, const SetPart& part, fmt::memory_buffer& out) {
  missing_lines(p, part, out);
  std::vector<std::pair<std::string, serve::ServeResult>> held;
  for (const auto& [r, letter] : {std::pair{&p.a, 'A'}, std::pair{p.b, 'B'}}) {
    if (r != nullptr && part.held(*r)) {
      held.emplace_back(baseline_name(letter, *r), serve_from_json(r->serve, name_or_source(*r)));
    }
  }
  if (held.empty()) return;
  put(out, "<div class=\"pair\">");
  for (const auto& [name, result] : held) {
    put(out, "<div><h3>");
    append_escaped(out, name);
    put(out, "</h3>");
    append_serve_tables(result, out);
    put(out, "</div>");
  }
  put(out, "</div>");
  const NamedServe a{held[0].first, &held[0].second};
  const NamedServe b = held.size() > 1 ? NamedServe{held[1].first, &held[1].second} : NamedServe{};
  append_serve_charts(a, b, out);
}

struct PartSection {
  const char* key;  // SetPart::key
  const char* id;   // the section's id
  const char* title;
  void (*append)(const Page&, const SetPart&, fmt::memory_buffer&);
};
constexpr PartSection kSections[] = {
    {"topo", "topology", "Topology", side_by_side<topo_block>},
    {"env", "versions", "Versions", versions_section},
    {"comm", "communication", "Communication", comm_section},
    {"step", "step", "Model step", side_by_side<step_block>},
    {"memory", "memory", "Memory", side_by_side<memory_block>},
    {"recovery", "recovery", "Recovery", side_by_side<recovery_block>},
    {"serve", "serving", "Serving", serve_section},
};

// ---- head and header --------------------------------------------------------------------------

void append_head(const Page& p, fmt::memory_buffer& out) {
  put(out,
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>plumb report · baseline set · ");
  append_escaped(out, baseline_name('A', p.a));
  if (p.b != nullptr) {
    put(out, " vs ");
    append_escaped(out, baseline_name('B', *p.b));
  }
  put(out, "</title><style>");
  put(out, kPageStyle);
  put(out, report_style());
  put(out, kSetStyle);
  put(out, serve_html_style());
  put(out, "</style></head><body>\n");
}

void append_baseline(const baseline::Record& r, char letter, int colour, fmt::memory_buffer& out) {
  putf(out, "<li><span class=\"swatch s{}\"></span><b>", colour);
  append_escaped(out, baseline_name(letter, r));
  put(out, "</b> · ");
  append_escaped(out, r.source);
  putf(out, " · {} host(s): ", r.hosts.size());
  append_escaped(out, join(r.hosts, ", "));
  put(out, "</li>");
}

// Which parts each record holds, and why one is missing: the first thing a reader checks.
void append_parts_table(const Page& p, fmt::memory_buffer& out) {
  put(out, "<table class=\"rows parts\"><tr><th>part</th><th>A</th>");
  put(out, p.b != nullptr ? "<th>B</th></tr>" : "</tr>");
  for (const SetPart& part : set_parts()) {
    putf(out, "<tr data-part=\"{}\"><td>{}</td>", part.key, part.title);
    for (const baseline::Record* r : {&p.a, p.b}) {
      if (r == nullptr) continue;
      if (part.held(*r)) {
        cell(out, "held", "held");
      } else {
        cell(out, "missing — " + missing_reason(*r, part), "missing");
      }
    }
    put(out, "</tr>");
  }
  put(out, "</table>");
}

void append_header(const Page& p, fmt::memory_buffer& out) {
  put(out, "<header><h1>plumb report · baseline set</h1><ul class=\"baselines\">");
  append_baseline(p.a, 'A', 0, out);
  if (p.b != nullptr) append_baseline(*p.b, 'B', 1, out);
  put(out, "</ul>");
  append_parts_table(p, out);
  put(out, "<nav>");
  for (const PartSection& s : kSections) putf(out, "<a href=\"#{}\">{}</a>", s.id, s.title);
  put(out, "</nav></header>\n");
}

const SetPart& part_of(std::string_view key) {
  for (const SetPart& p : set_parts()) {
    if (key == p.key) return p;
  }
  return set_parts().front();
}

}  // namespace

// ---- the blocks -------------------------------------------------------------------------------

void append_step_block(const baseline::StepSummary& s, fmt::memory_buffer& out) {
  putf(out, "<p>{} rank(s) × {} step(s), world size {}</p>", s.ranks, s.steps,
       s.world_size < 0 ? std::string("unknown") : std::to_string(s.world_size));
  put(out, "<table class=\"rows step-figures\"><tr><th>figure</th><th>median over the steps of "
           "the slowest rank (µs)</th></tr>");
  for (const baseline::StepSummary::Figure& f : s.figures) {
    put(out, "<tr>");
    cell(out, f.figure);
    cell(out, micros_one_decimal(f.median_us), "num");
    put(out, "</tr>");
  }
  put(out, "</table>");
  if (!s.collectives.empty()) {
    put(out, "<table class=\"rows step-collectives\"><tr><th>collective</th><th>busbw (GB/s), "
             "median</th><th>instances</th></tr>");
    for (const baseline::StepSummary::Collective& c : s.collectives) {
      put(out, "<tr>");
      cell(out, c.kind);
      cell(out, fmt::format("{:.2f}", c.busbw_gbps), "num");
      cell(out, std::to_string(c.instances), "num");
      put(out, "</tr>");
    }
    put(out, "</table>");
  }
  put(out, "<p>Straggler over the trace: ");
  append_escaped(out, s.straggler.rank < 0
                          ? std::string("none recorded")
                          : fmt::format("rank {} (the others waited {:.1f} µs on it)",
                                        s.straggler.rank, s.straggler.waited_on_us));
  put(out, "</p>");
}

namespace {

void append_rank_row(const mem::RankMemory& r, fmt::memory_buffer& out) {
  const bool judged = r.verdict != "too few steps";
  putf(out, "<tr class=\"{}\">", r.verdict == "leak" ? "leak" : "");
  cell(out, r.rank);
  cell(out, std::to_string(r.steps), "num");
  cell(out, std::to_string(r.warmup_steps), "num");
  cell(out, bytes_cell(r.settled_bytes), "num");
  cell(out, bytes_cell(r.settled_reserved_bytes), "num");
  cell(out, bytes_cell(r.peak_bytes), "num");
  cell(out, judged ? signed_bytes(r.creep.slope_bytes_per_step) : "—", "num");
  cell(out, judged ? fmt::format("{} to {}", signed_bytes(r.creep.ci95_low),
                                 signed_bytes(r.creep.ci95_high))
                   : "—", "num");
  cell(out, r.verdict);
  put(out, "</tr>");
}

void append_checkpoint(const mem::CheckpointCheck& c, fmt::memory_buffer& out) {
  put(out, "<h4>Checkpoint check</h4><table class=\"rows checkpoint\"><tr><th>rank</th>"
           "<th>before the save</th><th>after the save</th><th>after the load</th>"
           "<th>tolerance</th><th>verdict</th><th>why</th></tr>");
  putf(out, "<tr class=\"{}\">", c.verdict == "fail" ? "fail" : "");
  cell(out, c.rank.empty() ? "(none)" : c.rank);
  cell(out, bytes_cell(c.before_save_bytes), "num");
  cell(
      out,
      bytes_cell(c.after_save_bytes) + (c.save_step ? fmt::format(" (step {})", *c.save_step) : ""),
      "num");
  cell(
      out,
      bytes_cell(c.after_load_bytes) + (c.load_step ? fmt::format(" (step {})", *c.load_step) : ""),
      "num");
  cell(out, c.before_save_bytes ? bytes_cell(c.tolerance_bytes) : "—", "num");
  cell(out, c.verdict);
  cell(out, c.reason.empty() ? "—" : c.reason);
  put(out, "</tr></table>");
}

}  // namespace

void append_memory_block(const mem::MemoryBaseline& m, fmt::memory_buffer& out) {
  put(out, "<p class=\"note\">From ");
  append_escaped(out, m.source);
  putf(out, ": {} line(s), {} without memory; warm-up {}.</p>", m.lines, m.without_memory,
       m.warmup == mem::WarmupSource::kOption ? "set by --warmup" : "detected per rank (MSER)");
  put(out, "<table class=\"rows mem-ranks\"><tr><th>rank</th><th>steps</th><th>warm-up</th>"
           "<th>settled</th><th>reserved</th><th>peak</th><th>creep per step</th>"
           "<th>95% CI</th><th>verdict</th></tr>");
  for (const mem::RankMemory& r : m.ranks) append_rank_row(r, out);
  put(out, "</table><p>Worst: ");
  if (m.worst) {
    const mem::RankMemory& w = m.ranks[*m.worst];
    append_escaped(out, fmt::format("rank {}: {} per step over {} steps, {}", w.rank,
                                    signed_bytes(w.creep.slope_bytes_per_step), w.creep.steps,
                                    w.verdict));
  } else {
    putf(out, "none: no rank has {} steps after its warm-up", mem::kMinCreepSteps);
  }
  put(out, "</p>");
  append_checkpoint(m.checkpoint, out);
}

void append_recovery_block(const supervise::RecoveryBaseline& b, fmt::memory_buffer& out) {
  putf(out, "<p>{} attempt(s), {} failure(s), ", b.attempts, b.recoveries.size());
  append_escaped(out, b.result);
  putf(out, " after {:.1f} s{}</p>", b.wall_seconds,
       b.drill ? fmt::format("; a drill of {} fault(s)", b.faults_injected) : "");
  put(out, "<table class=\"rows recoveries\"><tr><th>#</th><th>kind</th><th>detail</th>"
           "<th>detect (s)</th><th>recovery (s)</th><th>restart to first step (s)</th>"
           "<th>downtime (s)</th><th>steps lost</th><th>resumed after the checkpoint</th></tr>");
  for (size_t i = 0; i < b.recoveries.size(); ++i) {
    const supervise::Recovery& r = b.recoveries[i];
    putf(out, "<tr><td class=\"num\">{}</td>", i + 1);
    cell(out, r.kind);
    cell(out, r.detail);
    cell(out, seconds_cell(r.detect_seconds), "num");
    cell(out, seconds_cell(r.recovery_seconds()), "num");
    cell(out, seconds_cell(r.restart_to_first_step_seconds), "num");
    cell(out, seconds_cell(r.downtime_seconds), "num");
    cell(out, optional_text(r.steps_lost), "num");
    cell(out, r.resumed_after_checkpoint ? (*r.resumed_after_checkpoint ? "yes" : "no") : "unknown");
    put(out, "</tr>");
  }
  const supervise::RecoveryTotals t = supervise::recovery_totals(b);
  put(out, "</table>");
  putf(out,
       "<p>Detect median {} s, recovery median {} s, downtime median {} s, max {} s; "
       "steps lost {}.</p>",
       seconds_cell(t.detect_median), seconds_cell(t.recovery_median),
       seconds_cell(t.downtime_median), seconds_cell(t.downtime_max), t.steps_lost);
}

void render_set_html(const baseline::Record& a, const baseline::Record* b,
                     const baseline::Diff* comm_diff, fmt::memory_buffer& out) {
  const Page page{a, b, comm_diff};
  append_head(page, out);
  append_header(page, out);
  for (const PartSection& s : kSections) {
    putf(out, "<section id=\"{}\" data-part=\"{}\"><h2>{}</h2>", s.id, s.key, s.title);
    s.append(page, part_of(s.key), out);
    put(out, "</section>\n");
  }
  out.append(kPageEnd.data(), kPageEnd.data() + kPageEnd.size());
}

void write_set_html(const baseline::Record& a, const baseline::Record* b,
                    const baseline::Diff* comm_diff, std::ostream& out) {
  fmt::memory_buffer page;
  render_set_html(a, b, comm_diff, page);
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
}

}  // namespace plumb::report
