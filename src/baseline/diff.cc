#include "baseline/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "baseline/context_diff.h"
#include "baseline/importers/table_helpers.h"
#include "common/error.h"
#include "common/stats.h"
#include "common/strings.h"
#include "common/units.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

using RowKey = std::tuple<std::string, std::string, std::string, uint64_t>;

// √(π/2) / 0.6745: σ of the median of many rounds, per MAD, times √rounds.
constexpr double kMedianSigmaPerMad = 1.8581;
constexpr size_t kCoverageShown = 4;  // (layer, collective, dtype) named in "share no measurement"
constexpr int kMostRoundsAdvised = 30;  // beyond, the advice is an idle machine
constexpr int64_t kMostRoundsRead = 1'000'000;  // a record's settings.rounds, clamped

// Rounds a record's figures were measured in: with a spread, `settings.rounds` (3, plumb
// baseline's default, when the record does not say); without, 1 when the iterations' percentiles
// are known, else 0 (imported logs).
int rounds_of(const Record& r) {
  const bool spread = std::any_of(r.rows.begin(), r.rows.end(), [](const comm::Row& row) {
    return !std::isnan(row.busbw_spread);
  });
  if (spread) {
    const json settings = r.comm.is_object() ? r.comm.value("settings", json::object()) : json();
    const json rounds = settings.is_object() ? settings.value("rounds", json()) : json();
    if (!rounds.is_number_integer() || rounds.get<int64_t>() < 2) return 3;
    return static_cast<int>(std::min<int64_t>(rounds.get<int64_t>(), kMostRoundsRead));
  }
  const bool percentiles = std::any_of(r.rows.begin(), r.rows.end(), [](const comm::Row& row) {
    return row.p50_us > 0 && row.p99_us > 0;
  });
  return percentiles ? 1 : 0;
}

// The standard deviation of the median of `rounds` rounds, per unit of the rounds' MAD: the
// median of k normal samples has σ ≈ √(π/2) σ / √k and MAD ≈ 0.6745 σ, so ≈ 1.86 MAD / √k for
// many rounds; for 3 (and fewer) it is ≈ 1 (0.67 σ / 0.6745 σ).
double median_sigma_per_mad(int rounds) {
  return std::min(1.0, kMedianSigmaPerMad / std::sqrt(static_cast<double>(std::max(rounds, 1))));
}

// The standard deviation of a run's figure, relative to it. With rounds: from the rounds' median
// absolute deviation (busbw_spread), above. Measured once: 1 − p50/p99 of its iterations. Neither
// (imported logs): 0, and only the threshold judges.
double sigma_of(const comm::Row& row, int rounds) {
  if (!std::isnan(row.busbw_spread)) return row.busbw_spread * median_sigma_per_mad(rounds);
  if (!(row.p50_us > 0) || !(row.p99_us > 0)) return 0;
  return std::max(0.0, 1.0 - row.p50_us / row.p99_us);
}

using GroupKey = std::tuple<std::string, std::string, std::string>;

// A few rounds can agree by chance: no size of a (layer, collective, dtype) is taken to be
// quieter than the median size of the same run.
std::map<GroupKey, double> pooled_sigmas(const std::vector<comm::Row>& rows, int rounds) {
  std::map<GroupKey, std::vector<double>> all;
  for (const comm::Row& r : rows) {
    all[GroupKey{r.layer, r.collective, r.dtype}].push_back(sigma_of(r, rounds));
  }
  std::map<GroupKey, double> pooled;
  for (auto& [key, sigmas] : all) {
    std::sort(sigmas.begin(), sigmas.end());
    pooled[key] = sigmas[(sigmas.size() - 1) / 2];
  }
  return pooled;
}

// The slowest group of a layer at one size, and its σ.
struct Point {
  double busbw = kNaN;
  double p99 = kNaN;
  double sigma = 0;
};

std::map<RowKey, Point> slowest_groups(const Record& record) {
  const std::vector<comm::Row>& rows = record.rows;
  const int rounds = rounds_of(record);
  const std::map<GroupKey, double> pooled = pooled_sigmas(rows, rounds);
  std::map<RowKey, Point> points;
  for (const comm::Row& row : rows) {
    auto [it, fresh] =
        points.try_emplace(RowKey{row.layer, row.collective, row.dtype, row.requested_bytes});
    Point& p = it->second;
    if (fresh || row.busbw_gbps < p.busbw) {
      p.busbw = row.busbw_gbps;
      p.sigma = std::max(sigma_of(row, rounds),
                         pooled.at(GroupKey{row.layer, row.collective, row.dtype}));
    }
    if (!std::isnan(row.p99_us) && (std::isnan(p.p99) || row.p99_us > p.p99)) p.p99 = row.p99_us;
  }
  return points;
}

double change(double a, double b) { return a > 0 && !std::isnan(b) ? (b - a) / a : kNaN; }

// B/A at or beyond kGrossFactor either way, to kGrossTolerance: no noise estimate hides it.
bool gross(double change) {
  const double ratio = 1 + change;
  return ratio <= (1 + kGrossTolerance) / kGrossFactor ||
         ratio >= kGrossFactor / (1 + kGrossTolerance);
}

// A 2× change first: neither the noise estimate nor the threshold (-t 100) can hide it.
Verdict judge(double change, double noise, double threshold) {
  if (std::isnan(change) || change == 0) return Verdict::kSame;
  const Verdict direction = change < 0 ? Verdict::kRegression : Verdict::kImprovement;
  if (gross(change)) return direction;
  const double magnitude = std::abs(change);
  if (magnitude < threshold) return Verdict::kSame;
  if (!(magnitude > noise)) return Verdict::kTooNoisy;
  return direction;
}

RowDiff row_diff(const RowKey& key, const Point& a, const Point& b, double threshold) {
  RowDiff d;
  std::tie(d.layer, d.collective, d.dtype, d.bytes) = key;
  d.busbw_a = a.busbw;
  d.busbw_b = b.busbw;
  d.busbw_change = change(a.busbw, b.busbw);
  d.p99_a = a.p99;
  d.p99_b = b.p99;
  d.p99_change = change(a.p99, b.p99);
  d.noise = kNoiseSigmas * std::hypot(a.sigma, b.sigma);
  d.verdict = std::isnan(a.busbw)   ? Verdict::kOnlyInB
              : std::isnan(b.busbw) ? Verdict::kOnlyInA
                                    : judge(d.busbw_change, d.noise, threshold);
  return d;
}

std::vector<RowDiff> row_diffs(const Record& a, const Record& b, double threshold) {
  const std::map<RowKey, Point> pa = slowest_groups(a);
  const std::map<RowKey, Point> pb = slowest_groups(b);
  std::map<RowKey, std::pair<Point, Point>> both;
  for (const auto& [key, p] : pa) both[key].first = p;
  for (const auto& [key, p] : pb) both[key].second = p;
  std::vector<RowDiff> out;
  out.reserve(both.size());
  for (const auto& [key, pair] : both) out.push_back(row_diff(key, pair.first, pair.second, threshold));
  return out;
}

// Sample standard deviation of the busbw changes (0 for fewer than 3).
double scatter(const std::vector<const RowDiff*>& rows) {
  if (rows.size() < 3) return 0;
  double mean = 0;
  for (const RowDiff* r : rows) mean += r->busbw_change / static_cast<double>(rows.size());
  double squares = 0;
  for (const RowDiff* r : rows) squares += std::pow(r->busbw_change - mean, 2);
  return std::sqrt(squares / static_cast<double>(rows.size() - 1));
}

// Rows of each (layer, collective, dtype) both runs measured, sizes ≥ `min_bytes`.
std::map<GroupKey, std::vector<RowDiff*>> by_group(std::vector<RowDiff>& rows, uint64_t min_bytes) {
  std::map<GroupKey, std::vector<RowDiff*>> groups;
  for (RowDiff& r : rows) {
    if (r.bytes >= min_bytes && !std::isnan(r.busbw_change)) {
      groups[GroupKey{r.layer, r.collective, r.dtype}].push_back(&r);
    }
  }
  return groups;
}

// Two runs minutes apart differ by more than the rounds of one run do (the machine's state moves
// too): no size's change counts as beyond noise unless it also stands out from how the changes of
// the other sizes of the same collective scatter.
void widen_by_scatter(std::vector<RowDiff>& rows, double threshold) {
  for (auto& [key, members] : by_group(rows, 0)) {
    for (RowDiff* r : members) {
      std::vector<const RowDiff*> others;
      for (const RowDiff* o : members) {
        if (o != r) others.push_back(o);
      }
      r->noise = std::max(r->noise, kNoiseSigmas * scatter(others));
      r->verdict = judge(r->busbw_change, r->noise, threshold);
    }
  }
}

// The sizes a group averages: those ≥ 1 MiB (bandwidth-bound); all of them when none is.
std::vector<const RowDiff*> averaged(const std::vector<RowDiff*>& group) {
  std::vector<const RowDiff*> large;
  for (const RowDiff* r : group) {
    if (r->bytes >= comm::kSummaryMinBytes) large.push_back(r);
  }
  return large.empty() ? std::vector<const RowDiff*>(group.begin(), group.end()) : large;
}

// Sizes ≥ 1 MiB whose busbw fell to half or less. A single size of an unchanged setup can move
// 2× only where latency rules (1.9× at 1 KiB measured, docs/diff.md); at the bandwidth-bound
// sizes the worst drift measured is 40%, so one halved there is a broken run, not noise — even
// when the group's mean, diluted by the sizes that held, looks too noisy to judge.
int halved(const std::vector<const RowDiff*>& members) {
  return static_cast<int>(std::count_if(members.begin(), members.end(), [](const RowDiff* r) {
    return r->bytes >= comm::kSummaryMinBytes && r->busbw_change < 0 && gross(r->busbw_change);
  }));
}

// Mean change over the averaged sizes. Its σ: from the rounds, √(sum of the sizes' variances) / n;
// from the sizes themselves, their scatter / √n; the larger counts.
std::vector<GroupDiff> group_diffs(std::vector<RowDiff>& rows, double threshold) {
  std::vector<GroupDiff> out;
  for (const auto& [key, group] : by_group(rows, 0)) {
    const std::vector<const RowDiff*> members = averaged(group);
    GroupDiff g;
    std::tie(g.layer, g.collective, g.dtype) = key;
    g.sizes = static_cast<int>(members.size());
    g.min_bytes = members.front()->bytes;
    double sum = 0;
    double variance = 0;
    for (const RowDiff* r : members) {
      sum += r->busbw_change;
      variance += std::pow(r->noise / kNoiseSigmas, 2);
    }
    g.change = sum / g.sizes;
    g.noise = kNoiseSigmas * std::max(std::sqrt(variance) / g.sizes,
                                      scatter(members) / std::sqrt(static_cast<double>(g.sizes)));
    g.halved = halved(members);
    g.verdict = g.halved > 0 ? Verdict::kRegression : judge(g.change, g.noise, threshold);
    out.push_back(g);
  }
  return out;
}

// "allreduce@world float32 1 KiB..16 MiB, ..." for the first few (layer, collective, dtype).
std::string coverage(const Record& r) {
  std::map<GroupKey, std::pair<uint64_t, uint64_t>> ranges;
  for (const comm::Row& row : r.rows) {
    auto [it, fresh] = ranges.try_emplace(GroupKey{row.layer, row.collective, row.dtype},
                                          row.requested_bytes, row.requested_bytes);
    it->second.first = std::min(it->second.first, row.requested_bytes);
    it->second.second = std::max(it->second.second, row.requested_bytes);
  }
  std::vector<std::string> parts;
  for (const auto& [key, range] : ranges) {
    if (parts.size() == kCoverageShown) {
      parts.push_back(fmt::format("and {} more", ranges.size() - kCoverageShown));
      break;
    }
    const auto& [layer, collective, dtype] = key;
    const std::string sizes = range.first == range.second
                                  ? format_bytes(range.first)
                                  : format_bytes(range.first) + ".." + format_bytes(range.second);
    parts.push_back(fmt::format("{}@{} {} {}", collective, layer, dtype, sizes));
  }
  return join(parts, ", ");
}

// A spread or wrong count no run can have (negative, not finite, absurd: table_helpers.h
// validity_problem) never reaches the noise model, whichever way the record came (the store and
// JSON files check every figure on reading; a record built in memory is checked here).
void check_rows(const Record& r, const std::string& name) {
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const comm::Row& row = r.rows[i];
    if (const auto problem = validity_problem(row)) {
      constexpr std::array<const char*, kFieldCount> kFields = {
          "bytes", "count", "time_us", "algbw_gbps", "busbw_gbps", "p50_us", "p99_us", "max_us",
          "wrong", "busbw_spread"};
      throw Error(fmt::format("{}: result {} ({}@{} {}): {}: {}", name, i, row.collective,
                              row.layer, format_bytes(row.requested_bytes),
                              kFields[static_cast<size_t>(problem->field)], problem->what));
    }
  }
}

// Nothing measured, or nothing measured by both: there is nothing to judge.
void check_comparable(const Record& a, const Record& b, const DiffOptions& o) {
  const std::string na = fmt::format("A ({})", name_of(a, o.a_name));
  const std::string nb = fmt::format("B ({})", name_of(b, o.b_name));
  for (const auto& [record, name] : {std::pair{&a, &na}, std::pair{&b, &nb}}) {
    if (record->rows.empty()) {
      throw Error(fmt::format("{} measured nothing: its results list is empty; expected the rows "
                              "of a plumb comm or plumb baseline run to compare",
                              *name));
    }
    check_rows(*record, *name);
  }
  std::set<RowKey> keys;
  for (const comm::Row& r : a.rows) keys.emplace(r.layer, r.collective, r.dtype, r.requested_bytes);
  const bool shared = std::any_of(b.rows.begin(), b.rows.end(), [&](const comm::Row& r) {
    return keys.count(RowKey{r.layer, r.collective, r.dtype, r.requested_bytes}) > 0;
  });
  if (!shared) {
    throw Error(fmt::format("{} and {} share no measurement: A has {}; B has {}; expected the same "
                            "(layer, collective, dtype, size) in both",
                            na, nb, coverage(a), coverage(b)));
  }
}

// The importers whose logs say neither where their sweep was to end nor that it ended (OSU:
// docs/import.md): a log that stopped between two rows looks finished.
bool end_unmarked(const Record& r) {
  return r.comm.is_object() && r.comm.contains("imported") && r.comm.value("backend", "") == "osu";
}

// Such a record ended early beside `other` when `other` measured larger sizes of one of its
// (layer, collective, dtype): those sizes are the ones it is missing.
std::optional<Issue> early_end(const Record& r, const Record& other, const std::string& other_name) {
  if (!end_unmarked(r)) return std::nullopt;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> last;
  for (const comm::Row& row : r.rows) {
    uint64_t& top = last[{row.layer, row.collective, row.dtype}];
    top = std::max(top, row.requested_bytes);
  }
  std::set<uint64_t> missing;
  uint64_t reached = 0;
  for (const comm::Row& row : other.rows) {
    const auto it = last.find({row.layer, row.collective, row.dtype});
    if (it == last.end() || row.requested_bytes <= it->second) continue;
    missing.insert(row.requested_bytes);
    reached = std::max(reached, it->second);
  }
  if (missing.empty()) return std::nullopt;
  Issue issue{IssueKind::kIncomplete, r.source,
              fmt::format("an OSU log prints no planned last size, and {} went on to {}",
                          other_name, format_bytes(*missing.rbegin())),
              reached, *missing.rbegin(), {}, missing.size()};
  for (auto it = missing.begin(); it != missing.end() && issue.missing.size() < kMissingKept; ++it) {
    issue.missing.push_back(*it);
  }
  return issue;
}

// `other_name`: "B (baseline 3)", for an issue found beside the other record.
RecordRef diff_ref_of(const Record& r, const std::string& given, const Record& other,
                      const std::string& other_name) {
  Validity validity = r.validity;
  const bool incomplete = std::any_of(validity.begin(), validity.end(), [](const Issue& i) {
    return i.kind == IssueKind::kIncomplete;
  });
  if (auto issue = early_end(r, other, other_name); issue && !incomplete) {
    validity.push_back(std::move(*issue));
  }
  return {r.id,
          r.label,
          r.created,
          r.source,
          rounds_of(r),
          r.comm.is_object() && r.comm.contains("imported"),
          name_of(r, given),
          summarize_validity(validity, r.rows)};
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSame: return "same";
    case Verdict::kTooNoisy: return "too noisy to judge";
    case Verdict::kRegression: return "regression";
    case Verdict::kImprovement: return "improvement";
    case Verdict::kOnlyInA: return "only in A";
    case Verdict::kOnlyInB: return "only in B";
  }
  return "?";
}

namespace {

template <class Items>
int count(const Items& items, Verdict verdict) {
  return static_cast<int>(std::count_if(items.begin(), items.end(), [&](const auto& x) {
    return x.verdict == verdict;
  }));
}

}  // namespace

int Diff::row_regressions() const { return count(rows, Verdict::kRegression); }

int Diff::regressions() const {
  return count(groups, Verdict::kRegression) + (strict ? row_regressions() : 0);
}

int Diff::too_noisy() const {
  return count(groups, Verdict::kTooNoisy) + (strict ? count(rows, Verdict::kTooNoisy) : 0);
}

Outcome Diff::outcome() const {
  if (b.validity.wrong) return Outcome::kWrongResults;
  if (b.validity.failed) return Outcome::kFailedCheck;
  if (regressions() > 0) return Outcome::kRegression;
  if (a.validity.incomplete || b.validity.incomplete) return Outcome::kIncomplete;
  if (a.validity.wrong || a.validity.failed) return Outcome::kBadReference;
  return too_noisy() > 0 ? Outcome::kTooNoisy : Outcome::kNoRegression;
}

int Diff::exit_code() const {
  switch (outcome()) {
    case Outcome::kWrongResults:
    case Outcome::kFailedCheck:
    case Outcome::kRegression: return static_cast<int>(ExitCode::kCheckFailed);
    case Outcome::kIncomplete:
    case Outcome::kBadReference: return static_cast<int>(ExitCode::kBadInput);
    case Outcome::kTooNoisy: return kTooNoisyExitCode;
    case Outcome::kNoRegression: return 0;
  }
  return static_cast<int>(ExitCode::kBadInput);
}

namespace {

// Past this the advice names no count: nothing but an idle machine will do.
constexpr int kMostRoundsCounted = 10'000;

// The rounds a σ estimated from rounds' spread needs to fall from `noise` under `change`, with
// `rounds` now: σ scales as median_sigma_per_mad(rounds). kMostRoundsCounted + 1 when no number
// of rounds would (a noise that is not finite).
int rounds_needed(double change, double noise, int rounds) {
  const double ratio = std::abs(change) * median_sigma_per_mad(rounds) / noise;
  if (!(ratio > 0) || !std::isfinite(ratio)) return kMostRoundsCounted + 1;
  const double k = std::floor(std::pow(kMedianSigmaPerMad / ratio, 2)) + 1;
  return k > kMostRoundsCounted ? kMostRoundsCounted + 1 : std::max(2, static_cast<int>(k));
}

// The judged item whose noise is furthest above its change: (change, noise).
std::pair<double, double> worst_noise(const Diff& d) {
  std::pair<double, double> worst{0, 0};
  double best_ratio = std::numeric_limits<double>::infinity();  // |change| / noise
  auto consider = [&](double c, double n, Verdict v) {
    const double ratio = n > 0 ? std::abs(c) / n : std::numeric_limits<double>::infinity();
    if (v == Verdict::kTooNoisy && ratio < best_ratio) {
      best_ratio = ratio;
      worst = {c, n};
    }
  };
  for (const GroupDiff& g : d.groups) consider(g.change, g.noise, g.verdict);
  if (d.strict) {
    for (const RowDiff& r : d.rows) consider(r.busbw_change, r.noise, r.verdict);
  }
  return worst;
}

// "about 5 rounds (...) bring the noise of 35% under the change of -30.0%"
std::string how_many(int k, std::pair<double, double> worst, std::string_view what) {
  if (k > kMostRoundsCounted) {
    return fmt::format("no count of {} brings the noise of {:.0f}% under the change of {:+.1f}%",
                       what, 100 * worst.second, 100 * worst.first);
  }
  return fmt::format("about {} {} bring the noise of {:.0f}% under the change of {:+.1f}%", k,
                     what, 100 * worst.second, 100 * worst.first);
}

// For imported records: several logs of the same test, imported as one record, are its rounds.
std::string imported_advice(const Diff& d, std::pair<double, double> worst) {
  const int logs = std::min(d.a.imported ? d.a.rounds : kMostRoundsCounted,
                            d.b.imported ? d.b.rounds : kMostRoundsCounted);
  const std::string plumb_run = d.a.imported && d.b.imported
                                    ? ""
                                    : "; measure the plumb run in rounds too (plumb baseline "
                                      "--rounds 5, plumb comm --rounds 5)";
  if (logs <= 1) {
    return "to judge them, import several logs of the same test as one record, for A and for B "
           "(plumb import run1.log run2.log run3.log: each size keeps the logs' median and their "
           "spread, as the rounds of plumb's own runs): one log has no spread of its own, and the "
           "scatter of its sizes' changes is this large" + plumb_run;
  }
  const int k = rounds_needed(worst.first, worst.second, logs);
  return fmt::format("to judge them, import more logs of the same test per record: the noise "
                     "falls about as 1/√logs, so {} (plumb import with that many logs){}{}",
                     how_many(k, worst, "logs"),
                     k > kMostRoundsAdvised ? "; on a cluster this noisy, rather rerun both when it is quiet" : "",
                     plumb_run);
}

}  // namespace

std::string Diff::too_noisy_advice() const {
  if (too_noisy() == 0) return "";
  const std::pair<double, double> worst = worst_noise(*this);
  if (a.imported || b.imported) return imported_advice(*this, worst);
  // The fewer rounds of the two.
  const int measured = std::min(a.rounds, b.rounds);
  if (measured <= 1) {
    return "to judge them, measure A and B in rounds (plumb baseline --rounds 5, plumb comm "
           "--rounds 5): one round's noise is the spread of its iterations, 1 − p50/p99, which "
           "more iterations (--iters, -n) do not shrink";
  }
  const int k = rounds_needed(worst.first, worst.second, measured);
  const char* busy =
      k > kMostRoundsAdvised ? "; on a machine this busy, rather rerun both when it is idle" : "";
  if (k > kMostRoundsCounted) {
    return fmt::format("to judge them, measure A and B when the machine is idle: {}",
                       how_many(k, worst, "rounds"));
  }
  return fmt::format("to judge them, measure A and B with more rounds: the noise falls about as "
                     "1/√rounds, so about {0} rounds (plumb baseline --rounds {0}, plumb comm "
                     "--rounds {0}) bring the noise of {1:.0f}% under the change of {2:+.1f}%; "
                     "more iterations per size (--iters, -n) steady each round{3}",
                     k, 100 * worst.second, 100 * worst.first, busy);
}

std::string Diff::attribution_warning() const {
  if (variables.size() <= 1) return "";
  std::vector<std::string> names;
  for (const VariableDiff& v : variables) names.push_back(fmt::format("{} {}", v.kind, v.name));
  return fmt::format("{} variables differ ({}): a change in the results cannot be attributed to "
                     "one of them; rerun with only one of them changed",
                     variables.size(), join(names, ", "));
}

Diff diff(const Record& a, const Record& b, const DiffOptions& options) {
  check_comparable(a, b, options);
  Diff d;
  d.a = diff_ref_of(a, options.a_name, b, fmt::format("B ({})", name_of(b, options.b_name)));
  d.b = diff_ref_of(b, options.b_name, a, fmt::format("A ({})", name_of(a, options.a_name)));
  d.threshold = options.threshold;
  d.strict = options.strict;
  d.rows = row_diffs(a, b, options.threshold);
  d.groups = group_diffs(d.rows, options.threshold);
  widen_by_scatter(d.rows, options.threshold);
  d.variables = context_diffs(a, b);
  d.unrecorded = unrecorded_context(a, b);
  d.summary_a = comm::summarize(a.rows);
  d.summary_b = comm::summarize(b.rows);
  return d;
}

std::string name_of(const Record& r, const std::string& given) {
  if (!given.empty()) return given;
  if (r.id > 0) return fmt::format("baseline {}", r.id);
  return r.source.empty() ? std::string("a record without source") : r.source;
}

RecordRef ref_of(const Record& r) { return {r.id, r.label, r.created, r.source, 0}; }

nlohmann::json ref_json(const RecordRef& r) {
  return {{"id", r.id}, {"label", r.label}, {"created", r.created}, {"source", r.source}};
}

nlohmann::json number_or_null(double v) {
  return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
}

nlohmann::json text_or_null(const std::string& t) {
  return t.empty() ? nlohmann::json(nullptr) : nlohmann::json(t);
}

std::string percent(double change) { return fmt::format("{:+.1f}%", 100 * change); }

}  // namespace plumb::baseline

namespace plumb::baseline {
namespace {

nlohmann::json ref_with_validity_json(const RecordRef& r) {
  nlohmann::json j = ref_json(r);
  j["validity"] = {{"marks", r.validity.marks}, {"issues", r.validity.lines}};
  return j;
}

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kWrongResults: return "wrong results";
    case Outcome::kFailedCheck: return "failed check";
    case Outcome::kRegression: return "regression";
    case Outcome::kIncomplete: return "incomplete";
    case Outcome::kBadReference: return "bad reference";
    case Outcome::kTooNoisy: return "too noisy to judge";
    case Outcome::kNoRegression: return "no regression";
  }
  return "?";
}

}  // namespace

nlohmann::json diff_json(const Diff& d) {
  nlohmann::json rows = nlohmann::json::array();
  for (const RowDiff& r : d.rows) {
    rows.push_back({{"layer", r.layer}, {"collective", r.collective}, {"dtype", r.dtype},
                    {"requested_bytes", r.bytes}, {"busbw_a_gbps", number_or_null(r.busbw_a)},
                    {"busbw_b_gbps", number_or_null(r.busbw_b)},
                    {"busbw_change", number_or_null(r.busbw_change)},
                    {"p99_a_us", number_or_null(r.p99_a)}, {"p99_b_us", number_or_null(r.p99_b)},
                    {"p99_change", number_or_null(r.p99_change)}, {"noise", r.noise},
                    {"verdict", verdict_name(r.verdict)}});
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupDiff& g : d.groups) {
    groups.push_back({{"layer", g.layer}, {"collective", g.collective}, {"dtype", g.dtype},
                      {"sizes", g.sizes}, {"min_bytes", g.min_bytes},
                      {"busbw_change", g.change}, {"noise", g.noise}, {"halved", g.halved},
                      {"verdict", verdict_name(g.verdict)}});
  }
  nlohmann::json variables = nlohmann::json::array();
  for (const VariableDiff& v : d.variables) {
    variables.push_back({{"kind", v.kind}, {"name", v.name}, {"a", v.a}, {"b", v.b}});
  }
  const std::string warning = d.attribution_warning();
  const std::string advice = d.too_noisy_advice();
  return {
      {"schema", kDiffSchema},
      {"a", ref_with_validity_json(d.a)},
      {"b", ref_with_validity_json(d.b)},
      {"threshold", d.threshold},
      {"strict", d.strict},
      {"regressions", d.regressions()},
      {"size_regressions", d.row_regressions()},
      {"too_noisy", d.too_noisy()},
      {"outcome", outcome_name(d.outcome())},
      {"exit_code", d.exit_code()},
      {"advice", advice.empty() ? nlohmann::json(nullptr) : nlohmann::json(advice)},
      {"rows", rows},
      {"groups", groups},
      {"variables", variables},
      {"unrecorded", d.unrecorded},
      {"summary", {{"a", comm::summary_json(d.summary_a)}, {"b", comm::summary_json(d.summary_b)}}},
      {"warning", warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(warning)}};
}

}  // namespace plumb::baseline

namespace plumb::baseline {

Verdict judge_change(double change, double noise, double threshold) {
  return judge(change, noise, threshold);
}

// A time's change judged on the time, but the 2× bound on the rate it is (B/A of time ≥ 2 is a
// rate halved).
Verdict judge_time_change(double change, double noise, double threshold) {
  if (std::isnan(change) || !(1 + change > 0) || change == 0) return Verdict::kSame;
  const Verdict direction = change > 0 ? Verdict::kRegression : Verdict::kImprovement;
  if (gross(1 / (1 + change) - 1)) return direction;  // whatever the noise and the threshold
  const double magnitude = std::abs(change);
  if (magnitude < threshold) return Verdict::kSame;
  if (!(magnitude > noise)) return Verdict::kTooNoisy;
  return direction;
}

double median_sigma_per_mad_of(int samples) { return median_sigma_per_mad(samples); }

}  // namespace plumb::baseline
