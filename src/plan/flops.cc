#include "plan/flops.h"

namespace plumb::plan {
namespace {

double d(int64_t v) { return static_cast<double>(v); }

double ffn_forward_flops(const ModelSpec& m, int layer) {
  if (!m.moe || layer < m.moe->first_dense_layers) return 2 * d(ffn_params(m, m.ffn_hidden));
  const int active = m.moe->top_k + m.moe->shared_experts;
  return 2 * d(active) * d(ffn_params(m, m.moe->expert_ffn_hidden)) +
         2 * d(m.hidden) * d(m.moe->experts);
}

double layers_forward_flops(const ModelSpec& m) {
  double total = 0;
  for (int layer = 0; layer < m.layers; ++layer) total += layer_forward_flops(m, layer);
  return total;
}

double logits_forward_flops(const ModelSpec& m) { return 2 * d(m.hidden) * d(m.vocab); }

}  // namespace

double layer_forward_flops(const ModelSpec& m, int layer) {
  return 2 * d(attention_params(m)) + 4 * d(m.seq_len) * d(m.hidden) + ffn_forward_flops(m, layer);
}

double forward_flops_per_token(const ModelSpec& m) {
  return layers_forward_flops(m) + logits_forward_flops(m);
}

double model_flops_per_token(const ModelSpec& m) { return 3 * forward_flops_per_token(m); }

double full_recompute_flops_per_token(const ModelSpec& m) {
  return 4 * layers_forward_flops(m) + 3 * logits_forward_flops(m);
}

}  // namespace plumb::plan
