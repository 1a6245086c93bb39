#include "report/memory_baseline_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/units.h"
#include "report/mem_reporter.h"

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

namespace {

// The reader of the memory part: the inverse of memory_baseline_json.
class MemoryPartReader : JsonFields {
 public:
  using JsonFields::JsonFields;

  mem::MemoryBaseline part(const json& doc, const std::string& path) const {
    if (!doc.is_object()) fail(path, "expected an object, got " + shown(doc));
    mem::MemoryBaseline b;
    b.source = text(doc, path, "source");
    b.warmup = one_of(doc, path, "warmup", {"detected", "option"}) == "detected"
                   ? mem::WarmupSource::kDetected
                   : mem::WarmupSource::kOption;
    b.lines = count(doc, path, "lines");
    b.without_memory = count(doc, path, "lines_without_memory");
    const json& ranks = array(doc, path, "ranks");
    for (size_t i = 0; i < ranks.size(); ++i) {
      b.ranks.push_back(rank(ranks[i], fmt::format("{}.ranks[{}]", path, i)));
    }
    b.worst = worst(doc, path, b.ranks);
    b.checkpoint = checkpoint(member(doc, path, "checkpoint"), at(path, "checkpoint"));
    return b;
  }

 private:
  size_t count(const json& doc, const std::string& path, const char* key) const {
    return static_cast<size_t>(integer(doc, path, key, 0, kMaxJsonCount));
  }
  std::optional<double> maybe(const json& doc, const std::string& path, const char* key) const {
    if (member(doc, path, key).is_null()) return std::nullopt;
    const double v = number(doc, path, key);
    if (!std::isfinite(v)) fail(at(path, key), "expected a finite number, got " + shown(doc[key]));
    return v;
  }
  std::optional<int64_t> maybe_step(const json& doc, const std::string& path, const char* key) const {
    if (member(doc, path, key).is_null()) return std::nullopt;
    return integer(doc, path, key, std::numeric_limits<int64_t>::min(), kMaxJsonCount);
  }
  std::string optional_text(const json& doc, const std::string& path, const char* key) const {
    return member(doc, path, key).is_null() ? std::string() : text(doc, path, key);
  }
  std::string one_of(const json& doc, const std::string& path, const char* key,
                     const std::vector<std::string>& allowed) const {
    std::string v = text(doc, path, key);
    for (const std::string& a : allowed) {
      if (v == a) return v;
    }
    fail(at(path, key), fmt::format("expected one of {}, got {}", fmt::join(allowed, ", "),
                                    shown(doc[key])));
  }
  mem::RankMemory rank(const json& doc, const std::string& path) const {
    if (!doc.is_object()) fail(path, "expected an object, got " + shown(doc));
    mem::RankMemory r;
    r.rank = optional_text(doc, path, "rank");
    r.steps = count(doc, path, "steps");
    r.warmup_steps = count(doc, path, "warmup_steps");
    r.creep.steps = count(doc, path, "fitted_steps");
    r.settled_bytes = maybe(doc, path, "settled_bytes");
    r.settled_reserved_bytes = maybe(doc, path, "settled_reserved_bytes");
    r.peak_bytes = maybe(doc, path, "peak_bytes");
    r.verdict = one_of(doc, path, "verdict", {"flat", "leak", "too few steps"});
    creep(doc, path, r);
    if (doc.contains("checkpoint")) {
      r.checkpoint = checkpoint(doc["checkpoint"], at(path, "checkpoint"));
    }
    return r;
  }
  // The slope and its interval: null exactly when too few steps were fitted.
  void creep(const json& doc, const std::string& path, mem::RankMemory& r) const {
    r.creep.verdict = r.verdict == "flat" ? "stable" : r.verdict;
    if (r.verdict == "too few steps") return;
    r.creep.slope_bytes_per_step = number(doc, path, "creep_bytes_per_step");
    const std::string ci = at(path, "creep_ci95_bytes_per_step");
    const json& interval = array(doc, path, "creep_ci95_bytes_per_step");
    if (interval.size() != 2 || !interval[0].is_number() || !interval[1].is_number()) {
      fail(ci, "expected [low, high], got " + shown(interval));
    }
    r.creep.ci95_low = interval[0].get<double>();
    r.creep.ci95_high = interval[1].get<double>();
  }
  mem::CheckpointCheck checkpoint(const json& doc, const std::string& path) const {
    if (!doc.is_object()) fail(path, "expected an object, got " + shown(doc));
    mem::CheckpointCheck c;
    c.rank = optional_text(doc, path, "rank");
    c.save_step = maybe_step(doc, path, "save_step");
    c.load_step = maybe_step(doc, path, "load_step");
    c.before_save_bytes = maybe(doc, path, "before_save_bytes");
    c.after_save_bytes = maybe(doc, path, "after_save_bytes");
    c.after_load_bytes = maybe(doc, path, "after_load_bytes");
    c.tolerance_bytes = maybe(doc, path, "tolerance_bytes").value_or(0);
    c.verdict = one_of(doc, path, "verdict", {"pass", "fail", "missing"});
    c.reason = optional_text(doc, path, "reason");
    c.departure_bytes = departure(c);
    return c;
  }
  static double departure(const mem::CheckpointCheck& c) {
    if (!c.before_save_bytes) return 0;
    double d = 0;
    for (const auto& after : {c.after_save_bytes, c.after_load_bytes}) {
      if (after) d = std::max(d, std::abs(*after - *c.before_save_bytes));
    }
    return d;
  }
  // The worst rank, by its name among ranks[]; null when none was fitted.
  std::optional<size_t> worst(const json& doc, const std::string& path,
                              const std::vector<mem::RankMemory>& ranks) const {
    const json& w = member(doc, path, "worst");
    if (w.is_null()) return std::nullopt;
    const std::string at_worst = at(path, "worst");
    if (!w.is_object()) fail(at_worst, "expected an object or null, got " + shown(w));
    const std::string name = optional_text(w, at_worst, "rank");
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i].rank == name) return i;
    }
    fail(at(at_worst, "rank"), fmt::format("names rank {}, which ranks[] does not hold", shown(w["rank"])));
  }
};

}  // namespace

mem::MemoryBaseline memory_baseline_from_json(const json& part, const std::string& origin,
                                              const std::string& path) {
  return MemoryPartReader(origin).part(part, path);
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
