#include "report/memory_baseline_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/units.h"

namespace plumb::report {
namespace {

using nlohmann::json;

template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json();
}

json text_or_null(const std::string& text) { return text.empty() ? json() : json(text); }

bool judged(const mem::RankMemory& r) { return r.verdict != "too few steps"; }

json checkpoint_json(const mem::CheckpointCheck& c) {
  return {{"rank", text_or_null(c.rank)},
          {"save_step", or_null(c.save_step)},
          {"load_step", or_null(c.load_step)},
          {"before_save_bytes", or_null(c.before_save_bytes)},
          {"after_save_bytes", or_null(c.after_save_bytes)},
          {"after_load_bytes", or_null(c.after_load_bytes)},
          {"tolerance_bytes", c.before_save_bytes ? json(c.tolerance_bytes) : json()},
          {"verdict", c.verdict},
          {"reason", text_or_null(c.reason)}};
}

json rank_json(const mem::RankMemory& r) {
  return {{"rank", text_or_null(r.rank)},
          {"steps", r.steps},
          {"warmup_steps", r.warmup_steps},
          {"fitted_steps", r.creep.steps},
          {"settled_bytes", or_null(r.settled_bytes)},
          {"settled_reserved_bytes", or_null(r.settled_reserved_bytes)},
          {"peak_bytes", or_null(r.peak_bytes)},
          {"creep_bytes_per_step", judged(r) ? json(r.creep.slope_bytes_per_step) : json()},
          {"creep_ci95_bytes_per_step",
           judged(r) ? json::array({r.creep.ci95_low, r.creep.ci95_high}) : json()},
          {"verdict", r.verdict}};
}

std::string bytes(const std::optional<double>& value) {
  return value ? format_bytes(static_cast<uint64_t>(std::llround(*value))) : "-";
}

std::string signed_bytes(double value) {
  return (value < 0 ? "-" : "+") + format_bytes(static_cast<uint64_t>(std::llround(std::abs(value))));
}

std::string rank_name(const std::string& rank) { return rank.empty() ? "(none)" : rank; }

std::string creep_text(const mem::RankMemory& r) {
  if (!judged(r)) {
    return fmt::format("too few steps to judge ({} after the warm-up, {} distinct needed)",
                       r.creep.steps, mem::kMinCreepSteps);
  }
  return fmt::format("{} ({} to {})", signed_bytes(r.creep.slope_bytes_per_step),
                     signed_bytes(r.creep.ci95_low), signed_bytes(r.creep.ci95_high));
}

std::string verdict_text(const std::string& verdict) { return verdict == "leak" ? "LEAK" : verdict; }

void print_rank(const mem::RankMemory& r, std::ostream& out) {
  fmt::print(out, "{:<8} {:>6} {:>8} {:>11} {:>11} {:>11}  {:<34} {}\n", rank_name(r.rank), r.steps,
             r.warmup_steps, bytes(r.settled_bytes), bytes(r.settled_reserved_bytes),
             bytes(r.peak_bytes), creep_text(r), judged(r) ? verdict_text(r.verdict) : "");
}

void print_worst(const mem::MemoryBaseline& b, std::ostream& out) {
  if (!b.worst) {
    fmt::print(out, "worst      none: no rank has {} steps after its warm-up\n", mem::kMinCreepSteps);
    return;
  }
  const mem::RankMemory& r = b.ranks[*b.worst];
  fmt::print(out, "worst      rank {}: {} per step (95% CI {} to {}) over {} steps: {}\n",
             rank_name(r.rank), signed_bytes(r.creep.slope_bytes_per_step),
             signed_bytes(r.creep.ci95_low), signed_bytes(r.creep.ci95_high), r.creep.steps,
             verdict_text(r.verdict));
}

std::string at_step(const std::optional<int64_t>& step) {
  return step ? fmt::format(" (step {})", *step) : "";
}

void print_checkpoint(const mem::CheckpointCheck& c, std::ostream& out) {
  if (!c.after_save_bytes && !c.after_load_bytes) {
    fmt::print(out, "checkpoint rank {}: missing ({})\n", rank_name(c.rank), c.reason);
    return;
  }
  fmt::print(out, "checkpoint rank {}: {} before the save · {} after it{} · {} after the load{}",
             rank_name(c.rank), bytes(c.before_save_bytes), bytes(c.after_save_bytes),
             at_step(c.save_step), bytes(c.after_load_bytes), at_step(c.load_step));
  if (c.before_save_bytes) {
    fmt::print(out, " · tolerance {}", format_bytes(static_cast<uint64_t>(std::llround(c.tolerance_bytes))));
  }
  fmt::print(out, ": {}{}\n", c.verdict, c.reason.empty() ? "" : " (" + c.reason + ")");
}

// When one rank decided the check, the ranks it could not be taken on are named, not hidden.
void print_unchecked(const mem::MemoryBaseline& b, std::ostream& out) {
  if (b.checkpoint.verdict == "missing") return;
  std::vector<std::string> unchecked;
  const mem::RankMemory* first = nullptr;
  for (const mem::RankMemory& r : b.ranks) {
    if (r.checkpoint.verdict != "missing") continue;
    unchecked.push_back(rank_name(r.rank));
    if (!first) first = &r;
  }
  if (!first) return;
  fmt::print(out, "note       checkpoint not checked on rank(s) {}: {}\n", fmt::join(unchecked, ", "),
             first->checkpoint.reason);
}

}  // namespace

json memory_baseline_json(const mem::MemoryBaseline& b) {
  json ranks = json::array();
  for (const mem::RankMemory& r : b.ranks) {
    json entry = rank_json(r);
    entry["checkpoint"] = checkpoint_json(r.checkpoint);
    ranks.push_back(std::move(entry));
  }
  return {{"source", b.source},
          {"warmup", b.warmup == mem::WarmupSource::kDetected ? "detected" : "option"},
          {"lines", b.lines},
          {"lines_without_memory", b.without_memory},
          {"ranks", std::move(ranks)},
          {"worst", b.worst ? rank_json(b.ranks[*b.worst]) : json()},
          {"checkpoint", checkpoint_json(b.checkpoint)}};
}

void print_memory_baseline(const mem::MemoryBaseline& b, std::ostream& out) {
  fmt::print(out, "# plumb mem creep · {} · {} rank(s) · {} line(s), {} without memory · warm-up {}\n",
             b.source, b.ranks.size(), b.lines, b.without_memory,
             b.warmup == mem::WarmupSource::kDetected ? "detected (MSER)" : "from --warmup");
  fmt::print(out, "{:<8} {:>6} {:>8} {:>11} {:>11} {:>11}  {:<34} {}\n", "rank", "steps", "warm-up",
             "settled", "reserved", "peak", "creep per step (95% CI)", "verdict");
  for (const mem::RankMemory& r : b.ranks) print_rank(r, out);
  print_worst(b, out);
  print_checkpoint(b.checkpoint, out);
  print_unchecked(b, out);
  if (b.unmarked_checkpoints > 0) {
    fmt::print(out, "note       {} \"checkpoint\" mark(s) on lines without memory.allocated_bytes: "
               "not checked\n", b.unmarked_checkpoints);
  }
}

}  // namespace plumb::report
