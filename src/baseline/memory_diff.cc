#include "baseline/memory_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "common/error.h"
#include "common/stats.h"
#include "common/units.h"
#include "mem/steps.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

std::string bytes_text(double v) {
  return format_bytes(static_cast<uint64_t>(std::llround(std::abs(v))));
}
std::string signed_bytes(double v) { return (v < 0 ? "-" : "+") + bytes_text(v); }
std::string rank_text(const std::string& rank) {
  return fmt::format("rank {}", rank.empty() ? "(none)" : rank);
}

const mem::RankMemory* find_rank(const mem::MemoryBaseline& b, const std::string& rank) {
  for (const mem::RankMemory& r : b.ranks) {
    if (r.rank == rank) return &r;
  }
  return nullptr;
}

// A's ranks in its order, then B's that A does not have.
std::vector<std::string> rank_names(const mem::MemoryBaseline& a, const mem::MemoryBaseline& b) {
  std::vector<std::string> names;
  for (const auto* side : {&a, &b}) {
    for (const mem::RankMemory& r : side->ranks) {
      if (std::find(names.begin(), names.end(), r.rank) == names.end()) names.push_back(r.rank);
    }
  }
  return names;
}

double level_of(const mem::RankMemory* r) {
  return r != nullptr && r->settled_bytes ? *r->settled_bytes : kNaN;
}

// The level's noise, relative to A's level: the checkpoint check's "same level" tolerance.
double level_noise(double a) {
  return std::max(mem::kCheckpointShare * a, mem::kCheckpointBytes) / a;
}

MemoryLevelDiff level_diff(const std::string& rank, const mem::RankMemory* a,
                           const mem::RankMemory* b, double threshold) {
  MemoryLevelDiff d{rank, level_of(a), level_of(b), kNaN, 0, Verdict::kSame};
  if (std::isnan(d.a_bytes) || std::isnan(d.b_bytes)) {
    d.verdict = std::isnan(d.a_bytes) && std::isnan(d.b_bytes) ? Verdict::kSame
                : std::isnan(d.a_bytes)                         ? Verdict::kOnlyInB
                                                                : Verdict::kOnlyInA;
    return d;
  }
  if (!(d.a_bytes > 0)) return d;
  d.change = (d.b_bytes - d.a_bytes) / d.a_bytes;
  d.noise = level_noise(d.a_bytes);
  d.verdict = judge_time_change(d.change, d.noise, threshold);
  return d;
}

// "+1 MiB per step (95% CI +1023.9 KiB to +1 MiB)"
std::string rate_text(double slope, const double (&ci)[2]) {
  return fmt::format("{} per step (95% CI {} to {})", signed_bytes(slope), signed_bytes(ci[0]),
                     signed_bytes(ci[1]));
}

// The standard error of a slope from its 95% interval over `steps` fitted steps (Student's t
// with steps − 2 degrees of freedom, as mem/steps fitted it).
double slope_sigma(const double (&ci)[2], size_t steps) {
  const size_t dof = steps > 2 ? steps - 2 : 1;
  return (ci[1] - ci[0]) / 2 / mem::t_quantile_95(dof);
}

void fill_side(const mem::RankMemory* r, std::string& verdict, double& slope, double (&ci)[2]) {
  verdict = r != nullptr ? r->verdict : "";
  const bool judged = r != nullptr && r->verdict != "too few steps";
  slope = judged ? r->creep.slope_bytes_per_step : kNaN;
  ci[0] = judged ? r->creep.ci95_low : kNaN;
  ci[1] = judged ? r->creep.ci95_high : kNaN;
}

std::string in_a_text(const MemoryCreepDiff& d) {
  if (d.verdict_a == "leak") return fmt::format("leaked {} in A", rate_text(d.slope_a, d.ci_a));
  return d.verdict_a == "flat" ? "flat in A" : "too few steps to judge in A";
}

// Both leak: B's slope against A's, the noise from both intervals.
void judge_both_leaking(MemoryCreepDiff& d, size_t steps_a, size_t steps_b, double threshold) {
  const std::string r = rank_text(d.rank);
  if (!(d.slope_a > 0)) {
    d.text = fmt::format("{} leaks {} in B and in A", r, rate_text(d.slope_b, d.ci_b));
    return;
  }
  const double sa = slope_sigma(d.ci_a, steps_a);
  const double sb = slope_sigma(d.ci_b, steps_b);
  d.change = (d.slope_b - d.slope_a) / d.slope_a;
  d.noise = kNoiseSigmas * std::sqrt(sa * sa + sb * sb) / d.slope_a;
  d.verdict = judge_time_change(d.change, d.noise, threshold);
  const char* how = d.verdict == Verdict::kRegression    ? "leaks faster:"
                    : d.verdict == Verdict::kImprovement ? "leaks slower:"
                                                         : "leaks";
  d.text = fmt::format("{} {} {} in B, {} in A ({}{})", r, how, rate_text(d.slope_b, d.ci_b),
                       rate_text(d.slope_a, d.ci_a), percent(d.change),
                       d.verdict == Verdict::kTooNoisy ? ", within the intervals' noise" : "");
}

MemoryCreepDiff creep_diff(const std::string& rank, const mem::RankMemory* a,
                           const mem::RankMemory* b, double threshold) {
  MemoryCreepDiff d;
  d.rank = rank;
  d.change = kNaN;
  fill_side(a, d.verdict_a, d.slope_a, d.ci_a);
  fill_side(b, d.verdict_b, d.slope_b, d.ci_b);
  const std::string r = rank_text(rank);
  if (a == nullptr || b == nullptr) {
    d.verdict = a == nullptr ? Verdict::kOnlyInB : Verdict::kOnlyInA;
  } else if (d.verdict_b == "leak" && d.verdict_a != "leak") {
    d.verdict = Verdict::kRegression;
    d.text = fmt::format("{} leaks {} in B, {}", r, rate_text(d.slope_b, d.ci_b), in_a_text(d));
  } else if (d.verdict_a == "leak" && d.verdict_b == "flat") {
    d.verdict = Verdict::kImprovement;
    d.text = fmt::format("{} is flat in B, {}", r, in_a_text(d));
  } else if (d.verdict_a == "leak" && d.verdict_b == "leak") {
    judge_both_leaking(d, a->creep.steps, b->creep.steps, threshold);
  } else if (d.verdict_b == "too few steps") {
    d.text = fmt::format("{}: too few steps in B to judge its creep ({})", r, in_a_text(d));
  }
  return d;
}

MemoryCheckpointDiff checkpoint_diff(const mem::CheckpointCheck& a, const mem::CheckpointCheck& b) {
  MemoryCheckpointDiff d{a.verdict, b.verdict, a.reason, b.reason, Verdict::kSame, ""};
  const auto why = [](const std::string& reason) {
    return reason.empty() ? std::string() : " (" + reason + ")";
  };
  const bool missing_a = a.verdict == "missing";
  const bool missing_b = b.verdict == "missing";
  if (missing_a && missing_b) {
    d.text = "checkpoint check missing in both" + why(b.reason);
  } else if (missing_b) {
    d.verdict = Verdict::kOnlyInA;
    d.text = fmt::format("checkpoint check missing in B{}: not judged ({} in A)", why(b.reason),
                         a.verdict);
  } else if (missing_a) {
    d.verdict = Verdict::kOnlyInB;
    d.text = fmt::format("checkpoint check missing in A{}: not judged ({} in B)", why(a.reason),
                         b.verdict);
  } else if (a.verdict == "pass" && b.verdict == "fail") {
    d.verdict = Verdict::kRegression;
    d.text = fmt::format("checkpoint check fails in B{}, passed in A", why(b.reason));
  } else if (a.verdict == "fail" && b.verdict == "pass") {
    d.verdict = Verdict::kImprovement;
    d.text = fmt::format("checkpoint check passes in B, failed in A{}", why(a.reason));
  } else if (b.verdict == "fail") {
    d.text = fmt::format("checkpoint check fails in both{}", why(b.reason));
  }
  return d;
}

std::string level_text(const MemoryLevelDiff& l) {
  const std::string r = rank_text(l.rank);
  if (l.verdict == Verdict::kOnlyInA) return r + " only in A";
  if (l.verdict == Verdict::kOnlyInB) return r + " only in B";
  const char* how = l.verdict == Verdict::kRegression    ? "settles higher"
                    : l.verdict == Verdict::kImprovement ? "settles lower"
                                                         : "settles";
  return fmt::format("{} {}: {} in B, {} in A ({}{})", r, how, bytes_text(l.b_bytes),
                     bytes_text(l.a_bytes), percent(l.change),
                     l.verdict == Verdict::kTooNoisy
                         ? fmt::format(", within the level's noise of {:.1f}%", 100 * l.noise)
                         : "");
}

template <class T>
int count(const std::vector<T>& v, Verdict verdict) {
  return static_cast<int>(
      std::count_if(v.begin(), v.end(), [&](const T& d) { return d.verdict == verdict; }));
}

}  // namespace

MemoryDiff memory_diff(const mem::MemoryBaseline& a, const mem::MemoryBaseline& b,
                       double threshold) {
  MemoryDiff d;
  d.threshold = threshold;
  d.ranks_a = static_cast<int>(a.ranks.size());
  d.ranks_b = static_cast<int>(b.ranks.size());
  for (const std::string& rank : rank_names(a, b)) {
    const mem::RankMemory* ra = find_rank(a, rank);
    const mem::RankMemory* rb = find_rank(b, rank);
    d.levels.push_back(level_diff(rank, ra, rb, threshold));
    d.creeps.push_back(creep_diff(rank, ra, rb, threshold));
  }
  d.checkpoint = checkpoint_diff(a.checkpoint, b.checkpoint);
  return d;
}

int MemoryDiff::regressions() const {
  return count(levels, Verdict::kRegression) + count(creeps, Verdict::kRegression) +
         (checkpoint.verdict == Verdict::kRegression ? 1 : 0);
}

int MemoryDiff::too_noisy() const {
  return count(levels, Verdict::kTooNoisy) + count(creeps, Verdict::kTooNoisy);
}

int MemoryDiff::improvements() const {
  return count(levels, Verdict::kImprovement) + count(creeps, Verdict::kImprovement) +
         (checkpoint.verdict == Verdict::kImprovement ? 1 : 0);
}

int MemoryDiff::exit_code() const {
  if (regressions() > 0) return static_cast<int>(ExitCode::kCheckFailed);
  return too_noisy() > 0 ? kTooNoisyExitCode : 0;
}

std::vector<MemoryFinding> MemoryDiff::findings() const {
  std::vector<MemoryFinding> out;
  for (const MemoryCreepDiff& c : creeps) {
    if (!c.text.empty()) out.push_back({c.verdict, c.text});
  }
  for (const MemoryLevelDiff& l : levels) {
    if (l.verdict != Verdict::kSame) out.push_back({l.verdict, level_text(l)});
  }
  if (!checkpoint.text.empty()) out.push_back({checkpoint.verdict, checkpoint.text});
  const auto order = [](Verdict v) {
    return v == Verdict::kRegression ? 0 : v == Verdict::kTooNoisy ? 1 : v == Verdict::kImprovement ? 2 : 3;
  };
  std::stable_sort(out.begin(), out.end(), [&](const MemoryFinding& x, const MemoryFinding& y) {
    return order(x.verdict) < order(y.verdict);
  });
  return out;
}

namespace {

json interval(const double (&ci)[2]) {
  return std::isnan(ci[0]) ? json(nullptr) : json::array({ci[0], ci[1]});
}

json levels_json(const std::vector<MemoryLevelDiff>& levels) {
  json out = json::array();
  for (const MemoryLevelDiff& l : levels) {
    out.push_back({{"rank", l.rank}, {"a_bytes", number_or_null(l.a_bytes)},
                   {"b_bytes", number_or_null(l.b_bytes)}, {"change", number_or_null(l.change)},
                   {"noise", l.noise}, {"verdict", verdict_name(l.verdict)}});
  }
  return out;
}

json creeps_json(const std::vector<MemoryCreepDiff>& creeps) {
  json out = json::array();
  for (const MemoryCreepDiff& c : creeps) {
    out.push_back({{"rank", c.rank}, {"verdict_a", text_or_null(c.verdict_a)},
                   {"verdict_b", text_or_null(c.verdict_b)},
                   {"a_bytes_per_step", number_or_null(c.slope_a)},
                   {"b_bytes_per_step", number_or_null(c.slope_b)},
                   {"a_ci95_bytes_per_step", interval(c.ci_a)},
                   {"b_ci95_bytes_per_step", interval(c.ci_b)},
                   {"change", number_or_null(c.change)}, {"noise", c.noise},
                   {"verdict", verdict_name(c.verdict)}, {"text", text_or_null(c.text)}});
  }
  return out;
}

json findings_json(const std::vector<MemoryFinding>& findings) {
  json out = json::array();
  for (const MemoryFinding& f : findings) {
    out.push_back({{"verdict", verdict_name(f.verdict)}, {"text", f.text}});
  }
  return out;
}

}  // namespace

json memory_diff_json(const MemoryDiff& d) {
  const MemoryCheckpointDiff& c = d.checkpoint;
  return {{"schema", kMemoryDiffSchema},
          {"threshold", d.threshold},
          {"ranks", {{"a", d.ranks_a}, {"b", d.ranks_b}}},
          {"regressions", d.regressions()},
          {"too_noisy", d.too_noisy()},
          {"exit_code", d.exit_code()},
          {"levels", levels_json(d.levels)},
          {"creeps", creeps_json(d.creeps)},
          {"checkpoint", {{"a", c.verdict_a}, {"b", c.verdict_b},
                          {"reason_a", text_or_null(c.reason_a)},
                          {"reason_b", text_or_null(c.reason_b)},
                          {"verdict", verdict_name(c.verdict)}, {"text", text_or_null(c.text)}}},
          {"findings", findings_json(d.findings())}};
}

}  // namespace plumb::baseline
