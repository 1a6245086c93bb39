#include "plan/flops.h"

namespace plumb::plan {
namespace {

double ffn_forward_flops(const ModelSpec& m, int layer) {
  if (!m.moe || layer < m.moe->first_dense_layers) return 2 * d(ffn_params(m, m.ffn_hidden));
  const int active = m.moe->top_k + m.moe->shared_experts;
  return 2 * d(active) * d(ffn_params(m, m.moe->expert_ffn_hidden)) +
         2 * d(m.hidden) * d(m.moe->experts);
}

double logits_forward_flops(const ModelSpec& m) { return 2 * d(m.hidden) * d(m.vocab); }

// An MTP module's layer (indexed after the main layers: MoE when the model has MoE) and its
// projection M_k, 2h → h.
double mtp_body_flops(const ModelSpec& m) {
  return layer_forward_flops(m, m.layers) + 2 * 2 * d(m.hidden) * d(m.hidden);
}

// What recomputation repeats: the layers and the MTP modules' bodies.
double body_forward_flops(const ModelSpec& m) {
  double total = 0;
  for (int layer = 0; layer < m.layers; ++layer) total += layer_forward_flops(m, layer);
  if (m.mtp_layers > 0) total += m.mtp_layers * mtp_body_flops(m);
  return total;
}

// The output layer of the main model and of each MTP module (the head is shared, each module
// runs it on its own hidden state).
double heads_forward_flops(const ModelSpec& m) {
  return (1 + m.mtp_layers) * logits_forward_flops(m);
}

}  // namespace

double attention_score_flops(const ModelSpec& m) {
  return 2 * d(m.seq_len) * d(q_width(m)) + 2 * d(m.seq_len) * d(o_width(m));
}

QuantisedValues gemm_quantised_values(const ModelSpec& m, int layer) {
  const double h = d(m.hidden);
  QuantisedValues v;
  v.forward = h + d(o_width(m));
  v.backward = d(q_width(m) + k_width(m) + v_width(m)) + h;
  const bool moe = m.moe && layer >= m.moe->first_dense_layers;
  const double f = d(moe ? m.moe->expert_ffn_hidden : m.ffn_hidden);
  const double copies = moe ? m.moe->top_k + m.moe->shared_experts : 1;
  const double matrices = d(ffn_params(m, static_cast<int64_t>(f))) / (h * f);  // 2 or 3
  v.forward += copies * (h + f);
  v.backward += copies * ((matrices - 1) * f + h);
  return v;
}

double layer_forward_flops(const ModelSpec& m, int layer) {
  return 2 * d(attention_params(m)) + attention_score_flops(m) + ffn_forward_flops(m, layer);
}

double mtp_forward_flops(const ModelSpec& m) {
  if (m.mtp_layers == 0) return 0;
  return m.mtp_layers * (mtp_body_flops(m) + logits_forward_flops(m));
}

double forward_flops_per_token(const ModelSpec& m) {
  return body_forward_flops(m) + heads_forward_flops(m);
}

double model_flops_per_token(const ModelSpec& m) { return 3 * forward_flops_per_token(m); }

double full_recompute_flops_per_token(const ModelSpec& m) {
  return 4 * body_forward_flops(m) + 3 * heads_forward_flops(m);
}

double every_second_mm_flops(const ModelSpec& m) {
  const double h = d(m.hidden);
  return 2 * (h * d(k_width(m)) + d(o_width(m)) * h + h * d(m.ffn_hidden));
}

double selective_op_flops_per_token(const ModelSpec& m) {
  return model_flops_per_token(m) + every_second_mm_flops(m) * m.layers;
}

}  // namespace plumb::plan
