#include "check/links_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/stats.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

// 1.4826 · MAD estimates the standard deviation of normally distributed values (Rousseeuw &
// Croux 1993, "Alternatives to the median absolute deviation", the consistency constant 1/Φ⁻¹(¾)).
constexpr double kMadToSigma = 1.4826;
// A pair that moved nothing (wrong data, busbw 0) has ratio 0; its logarithm is taken at this.
constexpr double kSmallestRatio = 1e-6;

struct Reference {
  double busbw = 0;
  double p99 = 0;
};

Reference reference(const std::vector<const PairResult*>& pairs) {
  std::vector<double> busbw;
  std::vector<double> p99;
  for (const PairResult* p : pairs) {
    busbw.push_back(p->busbw_gbps);
    p99.push_back(p->p99_us);
  }
  return {median_of(busbw), median_of(p99)};
}

double safe_ratio(double value, double reference) {
  return reference > 0 ? value / reference : 1.0;
}

// Each pair's ratio against its round's pairs of its layer, or its layer's.
void fill_ratios(std::vector<PairResult>& pairs) {
  std::map<std::string, std::vector<const PairResult*>> by_layer;
  std::map<std::pair<int, std::string>, std::vector<const PairResult*>> by_round;
  for (const PairResult& p : pairs) {
    by_layer[p.layer].push_back(&p);
    by_round[{p.round, p.layer}].push_back(&p);
  }
  std::vector<Reference> refs;
  for (const PairResult& p : pairs) {
    const auto& round = by_round[{p.round, p.layer}];
    const bool own_round = static_cast<int>(round.size()) >= kMinPairsPerRoundReference;
    refs.push_back(reference(own_round ? round : by_layer[p.layer]));
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    pairs[i].ratio = safe_ratio(pairs[i].busbw_gbps, refs[i].busbw);
    pairs[i].p99_ratio = safe_ratio(pairs[i].p99_us, refs[i].p99);
  }
}

LayerStats layer_stats(const std::string& name, const std::vector<PairResult>& pairs) {
  std::vector<const PairResult*> mine;
  std::vector<double> log_ratios;
  for (const PairResult& p : pairs) {
    if (p.layer != name) continue;
    mine.push_back(&p);
    log_ratios.push_back(std::log(std::max(p.ratio, kSmallestRatio)));
  }
  const Reference all = reference(mine);
  return {name, static_cast<int>(mine.size()), all.busbw, all.p99, mad_of(log_ratios)};
}

bool is_slow(const PairResult& p, const LayerStats& layer, const LinkThresholds& t) {
  const double deficit = -std::log(std::max(p.ratio, kSmallestRatio));
  const bool low = p.ratio < t.busbw_ratio && deficit > t.mad_factor * kMadToSigma * layer.mad_log_ratio;
  const bool tail = t.p99_ratio > 0 && p.p99_ratio > t.p99_ratio;
  return low || tail;
}

struct RankPairs {
  std::vector<const PairResult*> all;
  std::vector<const PairResult*> slow;
};

std::map<int, RankPairs> by_rank(const std::vector<PairResult>& pairs) {
  std::map<int, RankPairs> out;
  for (const PairResult& p : pairs) {
    for (const int r : {p.ranks.a, p.ranks.b}) {
      out[r].all.push_back(&p);
      if (p.slow) out[r].slow.push_back(&p);
    }
  }
  return out;
}

Suspect node_suspect(int rank, const RankPairs& rp) {
  Suspect s{rank, "node", "", {}, 0, 0};
  std::vector<double> ratios;
  std::vector<double> p99_ratios;
  std::set<std::string> layers;
  std::set<int> partners;
  for (const PairResult* p : rp.all) {
    ratios.push_back(p->ratio);
    p99_ratios.push_back(p->p99_ratio);
  }
  for (const PairResult* p : rp.slow) {
    partners.insert(p->ranks.a == rank ? p->ranks.b : p->ranks.a);
    layers.insert(p->layer);
  }
  s.partners.assign(partners.begin(), partners.end());
  s.layer = join(std::vector<std::string>(layers.begin(), layers.end()), ",");
  s.ratio = median_of(ratios);
  s.p99_ratio = median_of(p99_ratios);
  return s;
}

}  // namespace

double median_of(std::vector<double> values) { return percentile(values, 50.0); }

double mad_of(const std::vector<double>& values) {
  const double m = median_of(values);
  std::vector<double> deviations;
  for (const double v : values) deviations.push_back(std::abs(v - m));
  return median_of(deviations);
}

LinksAnalysis analyze_links(std::vector<PairResult> pairs, const LinkThresholds& thresholds) {
  LinksAnalysis out;
  fill_ratios(pairs);
  for (const PairResult& p : pairs) {
    const bool known = std::any_of(out.layers.begin(), out.layers.end(),
                                   [&](const LayerStats& l) { return l.name == p.layer; });
    if (!known) out.layers.push_back(layer_stats(p.layer, pairs));
  }
  for (PairResult& p : pairs) {
    const LayerStats& layer = *std::find_if(out.layers.begin(), out.layers.end(),
                                            [&](const LayerStats& l) { return l.name == p.layer; });
    p.slow = is_slow(p, layer, thresholds);
  }
  out.pairs = std::move(pairs);
  std::set<int> bad_nodes;
  for (const auto& [rank, rp] : by_rank(out.pairs)) {
    if (rp.all.size() < 2 || 2 * rp.slow.size() <= rp.all.size()) continue;
    bad_nodes.insert(rank);
    out.suspects.push_back(node_suspect(rank, rp));
  }
  std::map<std::pair<int, int>, size_t> links;  // a pair measured in several rounds: its worst
  for (const PairResult& p : out.pairs) {
    if (!p.slow || bad_nodes.contains(p.ranks.a) || bad_nodes.contains(p.ranks.b)) continue;
    const Suspect link{p.ranks.a, "link", p.layer, {p.ranks.b}, p.ratio, p.p99_ratio};
    const auto [at, added] = links.try_emplace({p.ranks.a, p.ranks.b}, out.suspects.size());
    if (added) {
      out.suspects.push_back(link);
    } else if (p.ratio < out.suspects[at->second].ratio) {
      out.suspects[at->second] = link;
    }
  }
  std::stable_sort(out.suspects.begin() + static_cast<long>(bad_nodes.size()), out.suspects.end(),
                   [](const Suspect& x, const Suspect& y) {
                     return std::tie(x.rank, x.partners) < std::tie(y.rank, y.partners);
                   });
  return out;
}

}  // namespace plumb::check
