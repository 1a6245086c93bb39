#include "plan/search.h"

#include <algorithm>
#include <chrono>

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

std::vector<int> expert_parallel(const ModelSpec& m, int dp, int max_ep) {
  if (!m.moe) return {1};
  std::vector<int> out;
  for (int ep : divisors(dp, max_ep)) {
    if (m.moe->experts % ep == 0) out.push_back(ep);
  }
  return out;
}

// Candidates per shape and ep: vpp × micro-batch × recompute × ZeRO, for the progress total.
int64_t per_shape(const SearchSpace& s) {
  return static_cast<int64_t>(s.vpps.size() * s.micro_batches.size() * s.recomputes.size() *
                              s.zeros.size());
}

bool faster(const Prediction& a, const Prediction& b) { return a.tokens_per_s > b.tokens_per_s; }

}  // namespace

SearchResult search(const Predictor& predictor, const SearchSpace& s, int top_k,
                    const SearchProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  const ModelSpec& m = predictor.model();
  const int max_tp = s.max_tp > 0 ? s.max_tp : predictor.network().cluster().devices_per_node;
  const std::vector<Shape> all = shapes(m, s, max_tp);
  const int64_t total = static_cast<int64_t>(all.size()) * per_shape(s);
  SearchResult r;
  int64_t done = 0;
  for (const Shape& shape : all) {
    Layout p;
    p.tp = shape.tp;
    p.cp = shape.cp;
    p.pp = shape.pp;
    p.dp = static_cast<int>(s.devices / (int64_t{shape.tp} * shape.cp * shape.pp));
    p.flash_attention = s.flash_attention;
    for (int ep : expert_parallel(m, p.dp, s.max_ep)) {
      p.ep = ep;
      for (int vpp : s.vpps) {
        if (vpp > 1 && p.pp == 1) continue;
        p.vpp = vpp;
        for (int64_t mbs : s.micro_batches) {
          p.micro_batch = mbs;
          p.global_batch = s.global_batch > 0 ? s.global_batch
                                              : global_batch_near(p, m, s.batch_tokens);
          const bool too_big = s.global_batch == 0 &&
                               static_cast<double>(p.global_batch * m.seq_len) >
                                   kMaxBatchOvershoot * s.batch_tokens;
          for (Recompute rc : s.recomputes) {
            p.recompute = rc;
            for (int zero : s.zeros) {
              p.zero = zero;
              ++r.candidates;
              if (!layout_valid(m, p, s.devices)) continue;
              if (too_big) {
                ++r.oversized;
                continue;
              }
              ++r.valid;
              if (!predictor.memory(p).fits()) continue;
              ++r.fitting;
              r.top.push_back(predictor(p));
              if (r.top.size() > static_cast<size_t>(4 * top_k)) {
                std::partial_sort(r.top.begin(), r.top.begin() + top_k, r.top.end(), faster);
                r.top.resize(top_k);
              }
            }
          }
        }
      }
      done += per_shape(s) / static_cast<int64_t>(expert_parallel(m, p.dp, s.max_ep).size());
    }
    if (progress) progress(std::min(done, total), total);
  }
  std::sort(r.top.begin(), r.top.end(), faster);
  if (r.top.size() > static_cast<size_t>(top_k)) r.top.resize(top_k);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace plumb::plan
