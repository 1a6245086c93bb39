#include "plan/memory.h"

namespace plumb::plan {
namespace {

double d(int64_t v) { return static_cast<double>(v); }

// Weights of the routed experts of every MoE layer.
double expert_params(const ModelSpec& m) {
  if (!m.moe) return 0;
  const int moe_layers = m.layers - m.moe->first_dense_layers;
  return d(moe_layers) * d(m.moe->experts) * d(ffn_params(m, m.moe->expert_ffn_hidden));
}

}  // namespace

double params_per_device(const ModelSpec& m, const Layout& p) {
  const double experts = expert_params(m);
  const double dense = d(parameter_count(m)) - experts;
  return dense / (p.tp * p.pp) + experts / (p.tp * p.pp * p.ep);
}

ModelStates model_states(const ModelSpec& m, const Layout& p) {
  const double n = params_per_device(m, p);
  ModelStates s{2 * n, 2 * n, 12 * n};
  if (p.zero >= 1) s.optimizer /= p.dp;
  if (p.zero >= 2) s.gradients /= p.dp;
  if (p.zero >= 3) s.weights /= p.dp;
  return s;
}

double layer_activation_bytes(const ModelSpec& m, const Layout& p) {
  const double sbh_t = d(m.seq_len) * d(p.micro_batch) * d(m.hidden) / p.tp;
  switch (p.recompute) {
    case Recompute::kNone:
      return sbh_t * (34 + 5.0 * m.heads * d(m.seq_len) / d(m.hidden));
    case Recompute::kSelective:
      return sbh_t * 34;
    case Recompute::kFull:
      return sbh_t * 2;
  }
  return 0;
}

double activation_bytes(const ModelSpec& m, const Layout& p) {
  return layer_activation_bytes(m, p) * m.layers;
}

}  // namespace plumb::plan
