#include "plan/memory.h"

namespace plumb::plan {
namespace {

double d(int64_t v) { return static_cast<double>(v); }

// Weights of the routed experts of every MoE layer (the MTP modules' too).
double expert_params(const ModelSpec& m) { return d(routed_expert_params(m)); }

// Korthikanti et al. Section 4.1, bytes per s·b·h: attention block 11 (+ 5as/h of scores),
// two layer norms 4.
constexpr double kAttentionActivation = 11;
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
  const double kept = kAttentionActivation + kNormActivation + mlp_activation_factor(m);
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
