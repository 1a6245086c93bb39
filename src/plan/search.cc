#include "plan/search.h"

#include <algorithm>
#include <chrono>

#include "plan/plausible.h"

namespace plumb::plan {
namespace {

std::vector<int> divisors(int64_t n, int64_t at_most) {
  std::vector<int> out;
  for (int64_t d = 1; d <= std::min(n, at_most); ++d) {
    if (n % d == 0) out.push_back(static_cast<int>(d));
  }
  return out;
}

// The model-parallel part of a layout: tp, cp, pp (dp is the rest of the devices).
struct Shape {
  int tp, cp, pp;
};

std::vector<Shape> shapes(const ModelSpec& m, const SearchSpace& s, int max_tp) {
  std::vector<Shape> out;
  for (int tp : divisors(s.devices, max_tp)) {
    if (m.heads % tp != 0) continue;
    for (int cp : divisors(s.devices / tp, s.max_cp)) {
      for (int pp : divisors(s.devices / tp / cp, m.layers)) out.push_back({tp, cp, pp});
    }
  }
  return out;
}

// The MoE grid of a shape: etp (tp, and 1 when folding) and ep dividing the experts with
// ep·etp dividing tp·cp·dp.
struct ExpertGrid {
  int etp, ep;
};

std::vector<ExpertGrid> expert_grids(const ModelSpec& m, const Layout& p, const SearchSpace& s) {
  if (!m.moe) return {{0, 1}};
  std::vector<int> etps = {p.tp};
  if (s.fold_etp && p.tp > 1) etps.push_back(1);
  const int64_t folded = int64_t{p.tp} * p.cp * p.dp;
  std::vector<ExpertGrid> out;
  for (int etp : etps) {
    for (int ep : divisors(folded / etp, s.max_ep)) {
      if (m.moe->experts % ep == 0) out.push_back({etp == p.tp ? 0 : etp, ep});
    }
  }
  return out;
}

// (schedule, vpp) pairs for pp stages.
struct Pipeline {
  Schedule schedule;
  int vpp;
};

std::vector<Pipeline> pipelines(const SearchSpace& s, int pp) {
  std::vector<Pipeline> out;
  for (int vpp : s.vpps) {
    if (vpp == 1) out.push_back({Schedule::kOneFOneB, 1});
    if (vpp > 1 && pp > 1) out.push_back({Schedule::kInterleaved, vpp});
  }
  if (pp > 1) {
    for (Schedule schedule : s.schedules) out.push_back({schedule, 1});
  }
  return out;
}

// Overlap choices that change anything for this layout.
std::vector<bool> choices(const std::vector<bool>& asked, bool applies) {
  return applies ? asked : std::vector<bool>{false};
}

// What the search ranks by: tokens/s, or their pessimistic bound (SearchSpace::pessimistic).
// `ceiling` is the most a score can be per token/s: the band's low end at no overhead (its
// narrowest), so that a bound on tokens/s times it bounds the score.
struct Ranking {
  const std::optional<BandModel>& band;
  double ceiling = 1;
  explicit Ranking(const std::optional<BandModel>& b)
      : band(b), ceiling(b && !b->empty() ? band_for(*b, 0).low : 1) {}
  double score(const Prediction& p) const {
    return band && !band->empty() ? pessimistic_tokens_per_s(*band, p) : p.tokens_per_s;
  }
  auto better() const {
    return [this](const Prediction& a, const Prediction& b) { return score(a) > score(b); };
  }
};

// Every layout of one pipeline shape with its ep, etp, schedule and overlaps: micro-batch,
// recomputation and ZeRO stage.
class Enumerator {
 public:
  Enumerator(const Predictor& predictor, const SearchSpace& s, int top_k, SearchResult& r)
      : predictor_(predictor), s_(s), m_(predictor.model()), top_k_(top_k), r_(r),
        rank_(s.pessimistic) {}

  void shape(Layout p) {
    for (const ExpertGrid& grid : expert_grids(m_, p, s_)) {
      p.etp = grid.etp;
      p.ep = grid.ep;
      for (const Pipeline& pipe : pipelines(s_, p.pp)) {
        p.schedule = pipe.schedule;
        p.vpp = pipe.vpp;
        // The rules read only the pipeline (pp, vpp, schedule): once per pipeline, not per layout.
        unusual_ = !s_.allow_unusual && !plausible(m_, p);
        known_.assign(s_.micro_batches.size() * 3 * s_.zeros.size(), Known{});
        // Most overlap first: its predictions bound the others'.
        const std::vector<bool> eps = choices(s_.ep_overlaps, m_.moe && p.ep > 1);
        const std::vector<bool> tps = choices(s_.tp_overlaps, p.tp > 1);
        for (auto ep = eps.rbegin(); ep != eps.rend(); ++ep) {
          p.ep_overlap = *ep;
          for (auto tp = tps.rbegin(); tp != tps.rend(); ++tp) {
            p.tp_overlap = *tp;
            batches(p, ep == eps.rbegin() && tp == tps.rbegin());
          }
        }
      }
    }
  }

 private:
  // What is known of one (mbs, recompute, ZeRO) of the current grid and pipeline from its first,
  // most overlapped, layout: memory does not depend on overlap, and that layout's tokens/s (or a
  // bound on it) bounds every layout with less overlap (overlap only hides communication).
  struct Known {
    int fits = -1;          // -1: not looked at yet
    double tokens_per_s = -1;  // an upper bound for every overlap; −1: none
  };

  // `most_overlap`: the first overlap variant of the grid and pipeline, which fills known_.
  void batches(Layout p, bool most_overlap) {
    for (size_t b = 0; b < s_.micro_batches.size(); ++b) {
      p.micro_batch = s_.micro_batches[b];
      p.global_batch = s_.global_batch > 0 ? s_.global_batch
                                           : global_batch_near(p, m_, s_.batch_tokens);
      const bool too_big = s_.global_batch == 0 &&
                           static_cast<double>(p.global_batch * m_.seq_len) >
                               kMaxBatchOvershoot * s_.batch_tokens;
      // Less recomputation only removes work: its tokens/s bounds more recomputation's.
      std::vector<double> less_recompute(s_.zeros.size(), -1);
      Recompute last = Recompute::kNone;
      for (Recompute rc : s_.recomputes) {
        p.recompute = rc;
        if (rc < last) std::fill(less_recompute.begin(), less_recompute.end(), -1);
        last = rc;
        for (size_t z = 0; z < s_.zeros.size(); ++z) {
          p.zero = s_.zeros[z];
          Known& known = known_[(b * 3 + static_cast<size_t>(rc)) * s_.zeros.size() + z];
          const double got = consider(p, too_big, known, less_recompute[z], most_overlap);
          if (got >= 0) less_recompute[z] = got;
        }
      }
    }
  }

  // Counts the layout; predicts it unless a bound shows it cannot enter the top. Returns an upper
  // bound on its tokens/s (the prediction itself when predicted), or −1 when it is not a
  // candidate (invalid, unusual, oversized, does not fit).
  double consider(const Layout& p, bool too_big, Known& known, double bound, bool most_overlap) {
    ++r_.candidates;
    if (!layout_valid(m_, p, s_.devices)) return -1;
    if (unusual_) {
      ++r_.unusual;
      return -1;
    }
    if (too_big) {
      ++r_.oversized;
      return -1;
    }
    ++r_.valid;
    if (known.fits < 0) known.fits = predictor_.memory(p).fits() ? 1 : 0;
    if (known.fits == 0) return -1;
    ++r_.fitting;
    if (known.tokens_per_s >= 0 && (bound < 0 || known.tokens_per_s < bound)) {
      bound = known.tokens_per_s;
    }
    // Below the k-th best found: cannot enter the top.
    if (bound >= 0 && bound * rank_.ceiling < threshold_) {
      if (most_overlap) known.tokens_per_s = bound;
      return bound;
    }
    r_.top.push_back(predictor_(p));
    const double tokens_per_s = r_.top.back().tokens_per_s;
    if (most_overlap) known.tokens_per_s = tokens_per_s;
    if (r_.top.size() > static_cast<size_t>(4 * top_k_)) {
      std::partial_sort(r_.top.begin(), r_.top.begin() + top_k_, r_.top.end(), rank_.better());
      r_.top.resize(top_k_);
      threshold_ = rank_.score(r_.top.back());
    }
    return tokens_per_s;
  }

  const Predictor& predictor_;
  const SearchSpace& s_;
  const ModelSpec& m_;
  int top_k_;
  SearchResult& r_;
  std::vector<Known> known_;  // per (mbs, recompute, ZeRO) of the current grid and pipeline
  Ranking rank_;
  double threshold_ = 0;      // the k-th best score found so far (0 until the top is full)
  bool unusual_ = false;      // the current pipeline breaks a plausible rule: left out
};

}  // namespace

SearchResult search(const Predictor& predictor, const SearchSpace& s, int top_k,
                    const SearchProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  const ModelSpec& m = predictor.model();
  const int max_tp = s.max_tp > 0 ? s.max_tp : predictor.network().cluster().devices_per_node;
  const std::vector<Shape> all = shapes(m, s, max_tp);
  SearchResult r;
  Enumerator enumerate(predictor, s, top_k, r);
  int64_t done = 0;
  for (const Shape& shape : all) {
    Layout p;
    p.tp = shape.tp;
    p.cp = shape.cp;
    p.pp = shape.pp;
    p.dp = static_cast<int>(s.devices / (int64_t{shape.tp} * shape.cp * shape.pp));
    p.flash_attention = s.flash_attention;
    p.dispatch = s.dispatch;
    enumerate.shape(p);
    if (progress) progress(++done, static_cast<int64_t>(all.size()));
  }
  const Ranking rank(s.pessimistic);
  std::sort(r.top.begin(), r.top.end(), rank.better());
  if (r.top.size() > static_cast<size_t>(top_k)) r.top.resize(top_k);
  r.pessimistic = s.pessimistic && !s.pessimistic->empty();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace plumb::plan
