#include "baseline/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "baseline/context_diff.h"
#include "common/strings.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using Key = std::tuple<std::string, std::string, std::string, uint64_t>;

// The standard deviation of a run's figure, relative to it. With rounds: the rounds' median
// absolute deviation (busbw_spread): for a normal spread MAD ≈ 0.67 σ and the median of 3 rounds
// has σ ≈ 0.67 σ, so the figure's σ ≈ MAD. Measured once: 1 − p50/p99 of its iterations. Neither
// (imported logs): 0, and only the threshold judges.
double sigma_of(const comm::Row& row) {
  if (!std::isnan(row.busbw_spread)) return row.busbw_spread;
  if (!(row.p50_us > 0) || !(row.p99_us > 0)) return 0;
  return std::max(0.0, 1.0 - row.p50_us / row.p99_us);
}

using GroupKey = std::tuple<std::string, std::string, std::string>;

// A few rounds can agree by chance: no size of a (layer, collective, dtype) is taken to be
// quieter than the median size of the same run.
std::map<GroupKey, double> pooled_sigmas(const std::vector<comm::Row>& rows) {
  std::map<GroupKey, std::vector<double>> all;
  for (const comm::Row& r : rows) all[GroupKey{r.layer, r.collective, r.dtype}].push_back(sigma_of(r));
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

std::map<Key, Point> slowest_groups(const std::vector<comm::Row>& rows) {
  const std::map<GroupKey, double> pooled = pooled_sigmas(rows);
  std::map<Key, Point> points;
  for (const comm::Row& row : rows) {
    auto [it, fresh] = points.try_emplace(
        Key{row.layer, row.collective, row.dtype, row.requested_bytes});
    Point& p = it->second;
    if (fresh || row.busbw_gbps < p.busbw) {
      p.busbw = row.busbw_gbps;
      p.sigma = std::max(sigma_of(row), pooled.at(GroupKey{row.layer, row.collective, row.dtype}));
    }
    if (!std::isnan(row.p99_us) && (std::isnan(p.p99) || row.p99_us > p.p99)) p.p99 = row.p99_us;
  }
  return points;
}

double change(double a, double b) { return a > 0 && !std::isnan(b) ? (b - a) / a : kNaN; }

Verdict judge(double change, double noise, double threshold) {
  const double magnitude = std::abs(change);
  if (std::isnan(change) || magnitude < threshold) return Verdict::kSame;
  if (magnitude <= noise) return Verdict::kNoise;
  return change < 0 ? Verdict::kRegression : Verdict::kImprovement;
}

RowDiff row_diff(const Key& key, const Point& a, const Point& b, double threshold) {
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
  const std::map<Key, Point> pa = slowest_groups(a.rows);
  const std::map<Key, Point> pb = slowest_groups(b.rows);
  std::map<Key, std::pair<Point, Point>> both;
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

// Mean change over the sizes ≥ 1 MiB. Its σ: from the rounds, √(sum of the sizes' variances) / n;
// from the sizes themselves, their scatter / √n; the larger counts.
std::vector<GroupDiff> group_diffs(std::vector<RowDiff>& rows, double threshold) {
  std::vector<GroupDiff> out;
  for (const auto& [key, group] : by_group(rows, comm::kSummaryMinBytes)) {
    const std::vector<const RowDiff*> members(group.begin(), group.end());
    GroupDiff g;
    std::tie(g.layer, g.collective, g.dtype) = key;
    g.sizes = static_cast<int>(members.size());
    double sum = 0;
    double variance = 0;
    for (const RowDiff* r : members) {
      sum += r->busbw_change;
      variance += std::pow(r->noise / kNoiseSigmas, 2);
    }
    g.change = sum / g.sizes;
    g.noise = kNoiseSigmas * std::max(std::sqrt(variance) / g.sizes,
                                      scatter(members) / std::sqrt(static_cast<double>(g.sizes)));
    g.verdict = judge(g.change, g.noise, threshold);
    out.push_back(g);
  }
  return out;
}

RecordRef ref_of(const Record& r) { return {r.id, r.label, r.created, r.source}; }

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSame: return "same";
    case Verdict::kNoise: return "noise";
    case Verdict::kRegression: return "regression";
    case Verdict::kImprovement: return "improvement";
    case Verdict::kOnlyInA: return "only in A";
    case Verdict::kOnlyInB: return "only in B";
  }
  return "?";
}

namespace {

template <class Items>
int count_regressions(const Items& items) {
  return static_cast<int>(std::count_if(items.begin(), items.end(), [](const auto& x) {
    return x.verdict == Verdict::kRegression;
  }));
}

}  // namespace

int Diff::row_regressions() const { return count_regressions(rows); }

int Diff::regressions() const {
  return count_regressions(groups) + (strict ? count_regressions(rows) : 0);
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
  Diff d;
  d.a = ref_of(a);
  d.b = ref_of(b);
  d.threshold = options.threshold;
  d.strict = options.strict;
  d.rows = row_diffs(a, b, options.threshold);
  d.groups = group_diffs(d.rows, options.threshold);
  widen_by_scatter(d.rows, options.threshold);
  d.variables = context_diffs(a, b);
  return d;
}

}  // namespace plumb::baseline

namespace plumb::baseline {
namespace {

nlohmann::json number_or_null(double v) {
  return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
}

nlohmann::json ref_json(const RecordRef& r) {
  return {{"id", r.id}, {"label", r.label}, {"created", r.created}, {"source", r.source}};
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
                      {"sizes", g.sizes}, {"min_bytes", comm::kSummaryMinBytes},
                      {"busbw_change", g.change}, {"noise", g.noise},
                      {"verdict", verdict_name(g.verdict)}});
  }
  nlohmann::json variables = nlohmann::json::array();
  for (const VariableDiff& v : d.variables) {
    variables.push_back({{"kind", v.kind}, {"name", v.name}, {"a", v.a}, {"b", v.b}});
  }
  const std::string warning = d.attribution_warning();
  return {{"schema", kDiffSchema}, {"a", ref_json(d.a)}, {"b", ref_json(d.b)},
          {"threshold", d.threshold}, {"strict", d.strict},
          {"regressions", d.regressions()}, {"size_regressions", d.row_regressions()}, {"rows", rows},
          {"groups", groups}, {"variables", variables},
          {"warning", warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(warning)}};
}

}  // namespace plumb::baseline
