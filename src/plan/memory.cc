#include "plan/memory.h"

namespace plumb::plan {
namespace {

double d(int64_t v) { return static_cast<double>(v); }

// Weights of the routed experts of every MoE layer (the MTP modules' too).
double expert_params(const ModelSpec& m) { return d(routed_expert_params(m)); }

// Korthikanti et al. Section 4.1, bytes per s·b·h: two layer norms 4. The attention block's 11
// (+ 5as/h of scores) is attention_activation_factor.
constexpr double kNormActivation = 4;

}  // namespace

DeviceParams device_params(const ModelSpec& m, const Layout& p) {
  const double experts = expert_params(m);
  const double dense = d(parameter_count(m)) - experts;
  return {dense / (p.tp * p.pp), experts / (static_cast<double>(p.tp) * p.pp * p.ep)};
}

double params_per_device(const ModelSpec& m, const Layout& p) { return device_params(m, p).total(); }

double dense_replicas(const Layout& p) { return static_cast<double>(p.dp) * p.cp; }
double expert_replicas(const Layout& p) { return dense_replicas(p) / p.ep; }

ModelStates model_states(const ModelSpec& m, const Layout& p) {
  const DeviceParams n = device_params(m, p);
  // Bytes per parameter of one part under ZeRO stage `zero`, its states sharded `shards` ways.
  const auto states = [&](double params, double shards) {
    ModelStates s{2 * params, 2 * params, 12 * params};
    if (p.zero >= 1) s.optimizer /= shards;
    if (p.zero >= 2) s.gradients /= shards;
    if (p.zero >= 3) s.weights /= shards;
    return s;
  };
  const ModelStates dense = states(n.dense, dense_replicas(p));
  const ModelStates experts = states(n.experts, expert_replicas(p));
  return {dense.weights + experts.weights, dense.gradients + experts.gradients,
          dense.optimizer + experts.optimizer};
}

namespace {

// Korthikanti et al. Section 4.1's attention block, 11·s·b·h bytes, is 2 B per element of what
// each matmul keeps for its backward — the QKV input (h), Q, K, V and the output projection's
// input — and the output dropout mask (1 B × h): 3·h + 2·(q + k + v + o). With the widths of the
// model's attention (model.h q_width...) instead of h: head_dim = h/heads gives 11 again; K and V
// are counted at the query's heads as Korthikanti counts them (GQA's narrower K and V are not
// credited). MLA also keeps its two latents (the up-projections' inputs) and their RMSNorms'
// inputs, 2·2·(q_lora_rank + kv_lora_rank) (DeepSeek-V2 Section 2.1's c_Q and c_KV).
double attention_activation_factor(const ModelSpec& m) {
  const double h = d(m.hidden);
  const double q = d(q_width(m));
  const double k = m.mla ? d(k_width(m)) : q;
  const double v = m.mla ? d(v_width(m)) : q;
  double bytes = 3 * h + 2 * (q + k + v + d(o_width(m)));
  if (m.mla) bytes += 4 * d(m.mla->q_lora_rank + m.mla->kv_lora_rank);
  return bytes / h;
}

double mlp_activation_factor(const ModelSpec& m) {
  const bool moe = m.moe && m.moe->first_dense_layers < m.layers;
  const double width = moe ? d(m.moe->top_k + m.moe->shared_experts) * d(m.moe->expert_ffn_hidden)
                           : d(m.ffn_hidden);
  const double gates = m.ffn_type == FfnType::kSwiglu ? 1.5 : 1.0;
  return 2 + 17 * gates * width / (4 * d(m.hidden));
}

}  // namespace

double layer_activation_bytes(const ModelSpec& m, const Layout& p) {
  const double s = d(m.seq_len) / p.cp;
  const double sbh_t = s * d(p.micro_batch) * d(m.hidden) / p.tp;
  const double kept = attention_activation_factor(m) + kNormActivation + mlp_activation_factor(m);
  const double scores = 5.0 * m.heads * d(m.seq_len) / d(m.hidden);
  switch (p.recompute) {
    case Recompute::kNone:
      return sbh_t * (kept + (p.flash_attention ? 0 : scores));
    case Recompute::kSelective:
      return sbh_t * kept;
    case Recompute::kFull:
      return sbh_t * 2;
  }
  return 0;
}

double activation_bytes(const ModelSpec& m, const Layout& p) {
  const double interleave = p.vpp > 1 ? 1 + (p.pp - 1.0) / (p.pp * p.vpp) : 1;
  return layer_activation_bytes(m, p) * m.layers * interleave;
}

}  // namespace plumb::plan
