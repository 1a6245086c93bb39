#include "mem/memory_baseline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/stats.h"
#include "common/units.h"

namespace plumb::mem {
namespace {

constexpr size_t kNoMark = static_cast<size_t>(-1);

size_t first_mark(const std::vector<MemoryPoint>& points, const char* mark, size_t from = 0) {
  for (size_t i = from; i < points.size(); ++i) {
    if (points[i].checkpoint == mark) return i;
  }
  return kNoMark;
}

std::string signed_bytes(double bytes) {
  return (bytes < 0 ? "-" : "+") + format_bytes(static_cast<uint64_t>(std::abs(bytes) + 0.5));
}

// The levels the check compares; before_save_bytes stays empty when there is no line before it.
void read_levels(const std::vector<MemoryPoint>& points, size_t save, size_t load,
                 CheckpointCheck& c) {
  if (save != kNoMark) {
    c.save_step = points[save].step;
    c.after_save_bytes = points[save].allocated;
    if (save > 0) c.before_save_bytes = points[save - 1].allocated;
  }
  if (load != kNoMark) {
    c.load_step = points[load].step;
    c.after_load_bytes = points[load].allocated;
  }
}

std::string missing_reason(const std::vector<MemoryPoint>& points, size_t save) {
  if (save == kNoMark) {
    return "no line marks a checkpoint save (\"checkpoint\": \"saved\"): no level to compare the "
           "load with";
  }
  return fmt::format("the \"saved\" line (line {}) is the rank's first: no level before the save",
                     points[save].line);
}

// Against the level before the save: the larger departure decides, the save's on a tie.
void judge(CheckpointCheck& c) {
  const double before = *c.before_save_bytes;
  c.tolerance_bytes = std::max(kCheckpointShare * before, kCheckpointBytes);
  const double after_save = *c.after_save_bytes - before;
  const double after_load = c.after_load_bytes ? *c.after_load_bytes - before : 0;
  const bool load_decides = std::abs(after_load) > std::abs(after_save);
  c.departure_bytes = std::max(std::abs(after_save), std::abs(after_load));
  if (c.departure_bytes > c.tolerance_bytes) {
    c.verdict = "fail";
    c.reason = fmt::format("{} after the {} against the level before the save, beyond the "
                           "tolerance of {}", signed_bytes(load_decides ? after_load : after_save),
                           load_decides ? "load" : "save", format_bytes(static_cast<uint64_t>(
                                                              c.tolerance_bytes + 0.5)));
  } else if (!c.after_load_bytes) {
    c.verdict = "missing";
    c.reason = "no line marks a checkpoint load (\"checkpoint\": \"loaded\")";
  } else {
    c.verdict = "pass";
  }
}

// Complete fits need kMinCreepSteps distinct steps (a restart may repeat some): fewer cannot be
// judged, whatever the count of lines.
Creep fit(const std::vector<MemoryPoint>& tail, double peak) {
  std::vector<uint64_t> allocated, peaks;
  std::vector<double> x;
  std::set<int64_t> distinct;
  for (const MemoryPoint& p : tail) {
    allocated.push_back(static_cast<uint64_t>(std::llround(p.allocated)));
    peaks.push_back(static_cast<uint64_t>(std::llround(p.peak.value_or(p.allocated))));
    x.push_back(static_cast<double>(p.step));
    distinct.insert(p.step);
  }
  if (distinct.size() < kMinCreepSteps) {
    Creep c;
    c.steps = tail.size();
    c.step_min = std::move(allocated);
    c.step_peak = std::move(peaks);
    c.verdict = "too few steps";
    return c;
  }
  return creep_from_minima(std::move(allocated), std::move(peaks),
                           static_cast<uint64_t>(std::llround(peak)), x);
}

std::string verdict_of(const Creep& c) {
  if (c.verdict == "stable") return "flat";
  return c.verdict;  // "leak", "too few steps"
}

void settle(const std::vector<MemoryPoint>& tail, RankMemory& r) {
  if (tail.empty()) return;
  std::vector<double> allocated, reserved;
  for (const MemoryPoint& p : tail) {
    allocated.push_back(p.allocated);
    if (p.reserved) reserved.push_back(*p.reserved);
  }
  r.settled_bytes = percentile(allocated, 50);
  if (reserved.size() == tail.size()) r.settled_reserved_bytes = percentile(reserved, 50);
}

// The rank whose check decides: a failing one first, then a passing one, the largest departure
// among them; with neither, the first rank's reason.
CheckpointCheck decisive(const std::vector<RankMemory>& ranks) {
  for (const char* verdict : {"fail", "pass"}) {
    const RankMemory* best = nullptr;
    for (const RankMemory& r : ranks) {
      if (r.checkpoint.verdict != verdict) continue;
      if (!best || r.checkpoint.departure_bytes > best->checkpoint.departure_bytes) best = &r;
    }
    if (best) return best->checkpoint;
  }
  return ranks.front().checkpoint;
}

std::optional<size_t> worst_rank(const std::vector<RankMemory>& ranks) {
  std::optional<size_t> worst;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].verdict == "too few steps") continue;
    const double slope = ranks[i].creep.slope_bytes_per_step;
    if (!worst || slope > ranks[*worst].creep.slope_bytes_per_step) worst = i;
  }
  return worst;
}

}  // namespace

bool MemoryBaseline::leaks() const {
  return std::any_of(ranks.begin(), ranks.end(),
                     [](const RankMemory& r) { return r.verdict == "leak"; });
}

// Welford's running mean and sum of squared deviations, from the end backwards: the sum over
// y[d..n) for every d in one pass, without the cancellation of Σy² − n·ȳ² at 10^10 bytes.
size_t mser_warmup(const std::vector<double>& y) {
  const size_t n = y.size();
  std::vector<double> statistic(n / 2 + 1, 0);
  double mean = 0, m2 = 0;
  for (size_t i = n; i-- > 0;) {
    const double count = static_cast<double>(n - i);
    const double delta = y[i] - mean;
    mean += delta / count;
    m2 += delta * (y[i] - mean);
    if (i <= n / 2) statistic[i] = m2 / (count * count);
  }
  if (n == 0) return 0;
  return static_cast<size_t>(std::min_element(statistic.begin(), statistic.end()) -
                             statistic.begin());
}

CheckpointCheck check_checkpoint(const std::vector<MemoryPoint>& points) {
  CheckpointCheck c;
  const size_t save = first_mark(points, "saved");
  size_t load = save == kNoMark ? kNoMark : first_mark(points, "loaded", save + 1);
  if (load == kNoMark) load = first_mark(points, "loaded");
  if (save == kNoMark && load == kNoMark) {
    c.verdict = "missing";
    c.reason = "no line marks a checkpoint save or load (\"checkpoint\": \"saved\" or \"loaded\")";
    return c;
  }
  read_levels(points, save, load, c);
  if (!c.before_save_bytes) {
    c.verdict = "missing";
    c.reason = missing_reason(points, save);
    return c;
  }
  judge(c);
  return c;
}

RankMemory rank_memory(const RankSeries& series, std::optional<size_t> warmup) {
  RankMemory r;
  r.rank = series.rank;
  r.steps = series.points.size();
  std::vector<double> allocated;
  double peak = 0;
  for (const MemoryPoint& p : series.points) {
    allocated.push_back(p.allocated);
    peak = std::max(peak, p.peak.value_or(p.allocated));
  }
  r.peak_bytes = r.steps > 0 ? std::optional<double>(peak) : std::nullopt;
  r.warmup_steps = warmup ? std::min(*warmup, r.steps) : mser_warmup(allocated);
  const std::vector<MemoryPoint> tail(series.points.begin() + static_cast<ptrdiff_t>(r.warmup_steps),
                                      series.points.end());
  settle(tail, r);
  r.creep = fit(tail, peak);
  r.verdict = verdict_of(r.creep);
  r.checkpoint = check_checkpoint(series.points);
  r.checkpoint.rank = series.rank;
  return r;
}

MemoryBaseline memory_baseline(const MemorySeries& series, std::optional<size_t> warmup) {
  MemoryBaseline b;
  b.source = series.source;
  b.warmup = warmup ? WarmupSource::kOption : WarmupSource::kDetected;
  b.lines = series.lines;
  b.without_memory = series.without_memory;
  b.unmarked_checkpoints = series.unmarked_checkpoints;
  for (const RankSeries& s : series.ranks) b.ranks.push_back(rank_memory(s, warmup));
  b.worst = worst_rank(b.ranks);
  if (!b.ranks.empty()) b.checkpoint = decisive(b.ranks);
  return b;
}

}  // namespace plumb::mem
