#include "plan/memory.h"

#include <algorithm>

namespace plumb::plan {
namespace {

// Weights of the routed experts of one MoE layer.
double layer_expert_params(const ModelSpec& m) {
  return m.moe ? d(m.moe->experts) * d(ffn_params(m, m.moe->expert_ffn_hidden)) : 0;
}

// Weights of the routed experts of every MoE layer (the MTP modules' too).
double expert_params(const ModelSpec& m) { return d(routed_expert_params(m)); }

// The input embedding and the output layer: V·h each.
double embedding_params(const ModelSpec& m) { return d(m.vocab) * d(m.hidden); }

// Everything but the routed experts, the embedding and the output layer, per decoder layer (MTP
// modules count as layers): attention, dense or shared-expert FFN, router, norms.
double dense_layer_params(const ModelSpec& m) {
  const double edges = embedding_params(m) * (m.tied_embeddings ? 1 : 2);
  return (d(parameter_count(m)) - expert_params(m) - edges) / (m.layers + m.mtp_layers);
}

// Korthikanti et al. Section 4.1, bytes per s·b·h: two layer norms 4. The attention block's 11
// (+ 5as/h of scores) is attention_activation_factor.
constexpr double kNormActivation = 4;

}  // namespace

DeviceParams device_params(const ModelSpec& m, const Layout& p) {
  const double experts = expert_params(m);
  const double dense = d(parameter_count(m)) - experts;
  return {dense / (p.tp * p.pp), experts / (static_cast<double>(p.expert_tp()) * p.pp * p.ep)};
}

double params_per_device(const ModelSpec& m, const Layout& p) { return device_params(m, p).total(); }

double dense_replicas(const Layout& p) { return static_cast<double>(p.dp) * p.cp; }
double expert_replicas(const Layout& p) {
  return static_cast<double>(p.tp) * p.cp * p.dp / (static_cast<double>(p.ep) * p.expert_tp());
}

namespace {

// Bytes of one part's parameters under ZeRO stage `zero`, its states sharded `shards` ways.
ModelStates states_of(double params, double shards, int zero) {
  ModelStates s{2 * params, 2 * params, 12 * params};
  if (zero >= 1) s.optimizer /= shards;
  if (zero >= 2) s.gradients /= shards;
  if (zero >= 3) s.weights /= shards;
  return s;
}

ModelStates states_of(const DeviceParams& n, const Layout& p) {
  const ModelStates dense = states_of(n.dense, dense_replicas(p), p.zero);
  const ModelStates experts = states_of(n.experts, expert_replicas(p), p.zero);
  return {dense.weights + experts.weights, dense.gradients + experts.gradients,
          dense.optimizer + experts.optimizer};
}

}  // namespace

ModelStates model_states(const ModelSpec& m, const Layout& p) {
  return states_of(device_params(m, p), p);
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

// What Megatron-Core with Transformer Engine keeps per layer, per s·b·h, for runs with
// FlashAttention (2023 on) and no dropout (Llama 3, DeepSeek-V3, Qwen3 set attention and hidden
// dropout to 0): attention keeps its input and Q, K, V at their own widths (GQA's narrower K and V
// credited) and the output projection's input, 2 B each (FlashAttention keeps only O and its
// log-sum-exp besides); each norm its input (2 + 2); the MLP its input (the norm's output), the
// first projection's output and the activation's (SwiGLU: 2·f then f; GELU: f and f): 2 + 2·3f/h
// or 2 + 2·2f/h. A MoE layer's routed experts keep, per token and each of its top_k copies, the
// permuted input h, 2·f_e and f_e; the shared experts as a dense MLP of shared·f_e.
double core_attention_factor(const ModelSpec& m) {
  const double h = d(m.hidden);
  double bytes = 2 * (h + d(q_width(m)) + d(k_width(m)) + d(v_width(m)) + d(o_width(m)));
  if (m.mla) bytes += 4 * d(m.mla->q_lora_rank + m.mla->kv_lora_rank);
  return bytes / h;
}

double core_mlp_factor(const ModelSpec& m) {
  const double h = d(m.hidden);
  const double projections = m.ffn_type == FfnType::kSwiglu ? 3 : 2;  // fc1 out + activation out
  const bool moe = m.moe && m.moe->first_dense_layers < m.layers;
  if (!moe) return 2 + 2 * projections * d(m.ffn_hidden) / h;
  const double f = d(m.moe->expert_ffn_hidden);
  const double routed = m.moe->top_k * (2 + 2 * projections * f / h);
  const double shared = 2 * projections * m.moe->shared_experts * f / h;
  return 2 + routed + shared;
}

// Bytes per token and h that torchtitan's op-level policy keeps of one dense layer
// (Recompute::kSelectiveOp): the layer's input (the checkpoint's, 2), the outputs of the mms it
// saves — wq, wv and w1, and w2 for SwiGLU (the 1st, 3rd, 5th and 7th; GELU's six mms end on w2,
// the 6th, recomputed) — and flash attention's output with its fp32 log-sum-exp per head.
// Llama 3 8B: 2·(4096 + 4096 + 1024 + 4096 + 14336 + 4096)/4096 + 4·32/4096 = 15.53.
double selective_op_factor(const ModelSpec& m) {
  const double h = d(m.hidden);
  const double down = m.ffn_type == FfnType::kSwiglu ? h : 0;
  const double mm_outputs = d(q_width(m)) + d(v_width(m)) + d(m.ffn_hidden) + down;
  return (2 * (h + mm_outputs + d(o_width(m))) + 4 * d(m.heads)) / h;
}

}  // namespace

double layer_activation_bytes(const ModelSpec& m, const Layout& p) {
  const double s = d(m.seq_len) / p.cp;
  const double sbh_t = s * d(p.micro_batch) * d(m.hidden) / p.tp;
  // Without FlashAttention: Korthikanti's rule, dropout masks and all (the 2021-era runs);
  // with it: what Megatron-Core keeps (above).
  const double kept = p.flash_attention
                          ? core_attention_factor(m) + kNormActivation + core_mlp_factor(m)
                          : attention_activation_factor(m) + kNormActivation + mlp_activation_factor(m);
  const double scores = 5.0 * m.heads * d(m.seq_len) / d(m.hidden);
  switch (p.recompute) {
    case Recompute::kNone:
      return sbh_t * (kept + (p.flash_attention ? 0 : scores));
    case Recompute::kSelective:
      return sbh_t * kept;
    case Recompute::kFull:
      return sbh_t * 2;
    case Recompute::kSelectiveOp:
      return sbh_t * selective_op_factor(m);
  }
  return 0;
}

double activation_bytes(const ModelSpec& m, const Layout& p) {
  const double interleave = p.vpp > 1 ? 1 + (p.pp - 1.0) / (p.pp * p.vpp) : 1;
  return layer_activation_bytes(m, p) * m.layers * interleave;
}

int stage_layers(int layers, int pp, int stage) {
  const int base = layers / pp;
  const int extra = layers % pp;  // stages with one layer more
  if (extra == 0 || pp == 1) return base;
  const int middle = pp - 2;
  if (stage > 0 && stage < pp - 1) return base + (stage <= extra ? 1 : 0);
  const int edge_extra = extra - middle;  // what the middle stages could not take: 0 or 1
  return base + (stage == pp - 1 && edge_extra > 0 ? 1 : 0);
}

int stage_first_layer(int layers, int pp, int stage) {
  const int base = layers / pp;
  const int extra = layers % pp;
  // Stages 1 .. min(extra, pp − 2) take one more; the last stage's extra comes after every first.
  const int longer_before = std::clamp(stage - 1, 0, std::min(extra, std::max(pp - 2, 0)));
  return stage * base + longer_before;
}

double in_flight(const Layout& p, int stage) {
  const double m = d(p.micro_batches());
  switch (p.pipeline_schedule()) {
    case Schedule::kInterleaved: {
      const double chunks = (p.pp - stage - 1.0) * 2 + (p.vpp - 1.0) * p.pp + 1;
      return std::min(chunks, m * p.vpp) / p.vpp;
    }
    case Schedule::kDualPipe:
      return std::min(p.pp + 1.0, m);
    case Schedule::kOneFOneB:
    case Schedule::kZeroBubble:
      break;
  }
  return std::min(d(p.pp - stage), m);
}

namespace {

// One pipeline stage's share of the model, before tp/ep.
struct StageContent {
  int layers = 0;
  int moe_layers = 0;  // of them, and of the MTP modules
  bool embedding = false;
  bool output = false;
};

StageContent stage_content(const ModelSpec& m, int pp, int stage) {
  StageContent c;
  c.layers = stage_layers(m.layers, pp, stage);
  const int first = stage_first_layer(m.layers, pp, stage);
  const int dense_layers = m.moe ? m.moe->first_dense_layers : m.layers;
  c.moe_layers = std::max(0, first + c.layers - std::max(first, dense_layers));
  c.embedding = stage == 0;
  c.output = stage == pp - 1;
  if (c.output && m.moe) c.moe_layers += m.mtp_layers;
  return c;
}

DeviceParams stage_params(const ModelSpec& m, const Layout& p, const StageContent& c) {
  double dense = dense_layer_params(m) * (c.layers + (c.output ? m.mtp_layers : 0));
  if (c.embedding) dense += embedding_params(m);
  // The output layer; a tied one is the embedding itself on one stage, a copy on the last.
  if (c.output && (!m.tied_embeddings || p.pp > 1)) dense += embedding_params(m);
  // The MTP modules embed their inputs with the main model's embedding: a copy on the last stage.
  if (c.output && m.mtp_layers > 0 && p.pp > 1) dense += embedding_params(m);
  const double experts = c.moe_layers * layer_expert_params(m);
  return {dense / p.tp, experts / (static_cast<double>(p.expert_tp()) * p.ep)};
}

// fp32 logits of one micro-batch, split over tp: the vocabulary-parallel cross entropy keeps them
// for its backward.
double logits_bytes(const ModelSpec& m, const Layout& p) {
  return d(m.seq_len) / p.cp * d(p.micro_batch) * d(m.vocab) / p.tp * 4;
}

StageMemory stage_memory_of(const ModelSpec& m, const Layout& p, const StageContent& c,
                            int stage, double flight) {
  StageMemory s;
  s.stage = stage;
  s.layers = c.layers;
  s.embedding = c.embedding;
  s.output = c.output;
  s.states = states_of(stage_params(m, p, c), p);
  s.activations = flight * c.layers * layer_activation_bytes(m, p);
  if (c.output) s.activations += logits_bytes(m, p);
  return s;
}

}  // namespace

StageMemory stage_memory(const ModelSpec& m, const Layout& p, int stage) {
  const StageContent c = stage_content(m, p.pp, stage);
  if (p.pipeline_schedule() != Schedule::kDualPipe || p.pp == 1) {
    return stage_memory_of(m, p, c, stage, in_flight(p, stage));
  }
  // Two mirrored stages on one device, their activations (pp + 1) chunks of the two's average.
  const StageContent mirror = stage_content(m, p.pp, p.pp - 1 - stage);
  StageContent both{c.layers + mirror.layers, c.moe_layers + mirror.moe_layers,
                    c.embedding || mirror.embedding, c.output || mirror.output};
  return stage_memory_of(m, p, both, stage, in_flight(p, stage) / 2);
}

StageMemory largest_stage(const ModelSpec& m, const Layout& p) {
  StageMemory best = stage_memory(m, p, 0);
  for (int stage : {1, p.pp - 1}) {
    if (stage <= 0 || stage >= p.pp) continue;
    const StageMemory s = stage_memory(m, p, stage);
    if (s.total() > best.total()) best = s;
  }
  return best;
}

}  // namespace plumb::plan
