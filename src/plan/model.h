// `plumb plan`'s model description (data/models/*.yaml) and the parameter count it implies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace plumb::plan {

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

// Weights of one decoder layer's attention: Q and O are h×h, K and V h×(h·kv/heads)
// (grouped-query attention, Ainslie et al. 2023). Biases and norms are left out.
int64_t attention_params(const ModelSpec& m);
// One FFN of width f: 2·h·f for GELU (up, down), 3·h·f for SwiGLU (gate, up, down; Shazeer 2020).
int64_t ffn_params(const ModelSpec& m, int64_t f);
// Every weight: embeddings (twice when untied), per layer attention + FFN (routed and shared
// experts and the router for MoE layers), norms (2·h per layer + h).
int64_t parameter_count(const ModelSpec& m);
// The same count in floating point, which cannot overflow: to check a model before counting.
double parameter_count_estimate(const ModelSpec& m);

}  // namespace plumb::plan
