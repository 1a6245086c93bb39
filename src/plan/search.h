// `plumb plan search`: every valid layout of a model on N devices, those that fit in memory ranked
// by throughput. The space: tp (within the scale-up domain unless allowed beyond), cp, pp,
// dp = N / (tp·cp·pp), the schedule (1F1B, interleaved with each vpp, zero-bubble, DualPipe), for
// MoE models etp (tp or 1) and ep (dividing the experts, ep·etp dividing tp·cp·dp) with and
// without all-to-all overlap, TP overlap on and off, micro-batch, recomputation and ZeRO stage.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "plan/band.h"
#include "plan/step.h"

namespace plumb::plan {

struct SearchSpace {
  int64_t devices = 0;
  int64_t global_batch = 0;       // 0: per layout, the batch nearest to batch_tokens
  double batch_tokens = kDefaultBatchTokens;
  std::vector<int64_t> micro_batches = {1, 2, 4, 8};
  std::vector<int> vpps = {1, 2, 4};  // vpp > 1: the interleaved schedule
  // The schedules besides 1F1B and interleaved (which vpps covers).
  std::vector<Schedule> schedules = {Schedule::kZeroBubble, Schedule::kDualPipe};
  std::vector<bool> ep_overlaps = {false, true};  // MoE models with ep > 1
  std::vector<bool> tp_overlaps = {false, true};  // tp > 1
  bool fold_etp = true;  // MoE models: etp 1 besides etp = tp
  DispatchPrecision dispatch = DispatchPrecision::kBf16;
  std::vector<Recompute> recomputes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  std::vector<int> zeros = {0, 1, 2, 3};
  int max_tp = 0;  // 0: the scale-up domain (devices per node)
  int max_cp = 16;
  int max_ep = 64;
  bool flash_attention = true;
  // Include the layouts plausible() calls unusual (plan/plausible.h): thin or uneven stages.
  bool allow_unusual = false;
  // Rank by the band's low end (plan/band.h: the pessimistic bound) instead of the point
  // estimate: layouts whose step is more communication and bubble, the parts the model is least
  // sure of, fall behind those with the same point and more compute.
  std::optional<BandModel> pessimistic;
};

// A layout whose smallest batch (dp × micro-batch sequences, × pp when interleaved) is more than
// twice batch_tokens is left out: it would train with a batch the run did not ask for.
inline constexpr double kMaxBatchOvershoot = 2;

struct SearchResult {
  std::vector<Prediction> top;  // best first
  int64_t candidates = 0;       // layouts enumerated
  int64_t valid = 0;            // that pass layout_problems and plausible, with the batch
                                // asked for
  int64_t unusual = 0;          // that pass layout_problems but not plausible: left out unless
                                // allow_unusual
  int64_t oversized = 0;        // that pass layout_problems but need a batch over
                                // kMaxBatchOvershoot × batch_tokens: left out
  int64_t fitting = 0;          // that also fit in memory
  bool pessimistic = false;     // ranked by the band's low end (SearchSpace::pessimistic)
  double seconds = 0;
};

// Called after each (tp, cp, pp) shape with (shapes done, shapes).
using SearchProgress = std::function<void(int64_t done, int64_t total)>;

SearchResult search(const Predictor& predictor, const SearchSpace& space, int top_k,
                    const SearchProgress& progress = {});

}  // namespace plumb::plan
