// `plumb plan`'s model description (data/models/*.yaml) and the parameter count it implies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace plumb::plan {

// A count of the model (hidden, vocab, parameters) as the formulas' floating point.
inline double d(int64_t v) { return static_cast<double>(v); }

struct MoeSpec {
  int experts = 0;             // routed experts per MoE layer
  int top_k = 0;               // routed experts per token
  int shared_experts = 0;      // experts every token goes through
  int64_t expert_ffn_hidden = 0;
  int first_dense_layers = 0;  // leading layers with a dense FFN instead
  int max_nodes_per_token = 0; // node-limited routing: a token's experts on at most this many
                               // nodes (DeepSeek-V3: 4); 0: no limit
};

// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, Section 2.1; DeepSeek-V3 config.json
// names): queries through a rank-q_lora_rank bottleneck (0: a plain h × heads·qk_head_dim
// projection), keys and values through one rank-kv_lora_rank latent, with a decoupled RoPE key of
// qk_rope_head_dim shared by all heads.
struct MlaSpec {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  // The head width the framework's fused attention kernel pads Q, K and V up to when their widths
  // differ (0: none). ModelLink/MindSpeed-LLM's MultiHeadLatentAttention.forward (d4feda79,
  // modellink/core/transformer/multi_head_latent_attention.py), under --use-flash-attn with
  // q_head_dim != v_head_dim: --shape-order BNSD pads V to q_head_dim (192 for DeepSeek-V2), any
  // other order (the default SBH) pads Q, K and V to 256; the output is sliced back after. The
  // padded columns are computed, not model FLOPs (step.cc, attention_padding).
  int64_t attention_pad_head_dim = 0;
};

enum class FfnType { kGelu, kSwiglu };

struct ModelSpec {
  std::string name;
  int layers = 0;
  int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int64_t ffn_hidden = 0;
  int64_t vocab = 0;
  int64_t seq_len = 0;
  FfnType ffn_type = FfnType::kGelu;
  bool tied_embeddings = false;  // the output layer reuses the input embedding
  std::optional<MoeSpec> moe;
  int64_t head_dim = 0;          // attention width per head; 0: hidden / heads (Qwen3: 128 ≠ h/a)
  std::optional<MlaSpec> mla;
  int mtp_layers = 0;            // multi-token prediction modules (DeepSeek-V3: 1), each a layer
  double params_b = 0;           // the published parameter count (billions), 0 when not given
};

// The most parameters a model may have: 1e15, 500 times the largest published dense model
// (Megatron 1T), and low enough that every count the planner forms stays inside int64.
inline constexpr double kMaxParameters = 1e15;

// Reads a model file; every problem at once in one plumb::Error naming the file, line and key:
// duplicate and unknown keys (with "did you mean"), values of the wrong type or out of range
// (each key's accepted range), a model beyond kMaxParameters. A directory or an unreadable file is
// one line saying so.
ModelSpec load_model(const std::string& path);
// The same from a file's text (a plan JSON's inputs, plan --calibrate); `source` names it.
ModelSpec model_from_text(std::string_view text, const std::string& source);

// Attention widths per token. Without MLA, d = head_dim (0: hidden/heads): Q and the attention
// output are heads·d wide (h when head_dim is 0), K and V each kv_heads·d (h·kv_heads/heads).
// With MLA: Q and K heads·(qk_nope_head_dim + qk_rope_head_dim), V and the output heads·v_head_dim
// (K and V as the up-projections make them, what training computes and stores).
int64_t q_width(const ModelSpec& m);
int64_t k_width(const ModelSpec& m);
int64_t v_width(const ModelSpec& m);
int64_t o_width(const ModelSpec& m);  // the attention output, the input of W_O

// Weights of one decoder layer's attention. Without MLA: Q h×q_width, K and V h×k_width (GQA,
// Ainslie et al. 2023), O o_width×h. With MLA (DeepSeek-V2 Section 2.1; DeepSeek-V3's config):
// W_DQ h×q_lora_rank, its RMSNorm, W_UQ q_lora_rank×q_width (without q_lora_rank: W_Q h×q_width);
// W_DKV h×(kv_lora_rank + qk_rope_head_dim) (the latent and the shared RoPE key), its RMSNorm,
// W_UK and W_UV kv_lora_rank×(k_width − heads·rope + v_width), W_O o_width×h. Biases and
// per-head norms (Qwen3's QK-norm, 2·head_dim) are left out.
int64_t attention_params(const ModelSpec& m);
// One FFN of width f: 2·h·f for GELU (up, down), 3·h·f for SwiGLU (gate, up, down; Shazeer 2020).
int64_t ffn_params(const ModelSpec& m, int64_t f);
// One multi-token prediction module (DeepSeek-V3, arXiv:2412.19437, Section 2.2): a Transformer
// layer like the model's last (MoE when the model has MoE), the projection M_k (2h×h) and three
// RMSNorms (the two inputs' and the one before the output head; HF weights enorm, hnorm,
// shared_head.norm). The embedding and the output head are shared with the main model.
int64_t mtp_module_params(const ModelSpec& m);
// Weights of the routed experts of every MoE layer, the MTP modules' included: what expert
// parallelism shards.
int64_t routed_expert_params(const ModelSpec& m);
// The main model: embeddings (twice when untied), per layer attention + FFN (routed and shared
// experts and the router for MoE layers), norms (2·h per layer + h). What `params_b` publishes
// (DeepSeek-V3's 671B leaves its MTP module out).
int64_t main_parameter_count(const ModelSpec& m);
// Every weight a training device holds: the main model and its mtp_layers MTP modules
// (DeepSeek-V3: 671.0B + 11.6B = 682.6B; the 685B on the hub also counts the MTP module's copies
// of the embedding and the output head, 2 × 0.93B).
int64_t parameter_count(const ModelSpec& m);
// The main model's weights one token runs through: all but the routed experts it is not sent to
// (E − top_k per MoE layer) and the input embedding (a lookup, no FLOPs), as DeepSeek counts its
// 37B (README_WEIGHTS.md: "Activation parameters: 36.6B (including 0.9B for the output Head)").
// Qwen counts the input embedding too (Qwen3-30B-A3B's 3.3B): add vocab·hidden for that figure.
int64_t activated_parameter_count(const ModelSpec& m);
// The same count in floating point, which cannot overflow: to check a model before counting.
double parameter_count_estimate(const ModelSpec& m);

}  // namespace plumb::plan
